"""Run the declared verifications and report, per check, the errors, tolerance and time.

``verify(entry, device=...)`` imports ``<module>.verification``, runs each check on
the device and returns a :class:`Run`. A check that raises is a failed check with the
error as its detail, so one broken kernel never hides the others. On CUDA the clock is
read after a device synchronisation, so the durations are kernel timings.

``kernels.record`` writes runs into the graph.
"""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.util
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

from kernels.registry import Entry
from kg.errors import KernelError

__all__ = [
    "CheckRun",
    "Run",
    "load_verification",
    "missing_requirements",
    "resolve_device",
    "verify",
    "verify_many",
]


@dataclass
class CheckRun:
    name: str
    claim: str
    measure: str
    tolerance: float
    max_abs: float
    max_rel: float
    passed: bool
    seconds: float
    gradients: bool = False
    detail: str = ""

    @property
    def error(self) -> float:
        return self.max_abs if self.measure == "abs" else self.max_rel


@dataclass
class Run:
    technique: str
    module: str
    form: str
    device: str
    dtype: str
    torch_version: str
    started: dt.datetime
    ended: dt.datetime
    compares: str = ""
    checks: list[CheckRun] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.checks)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["started"] = self.started.isoformat()
        out["ended"] = self.ended.isoformat()
        out["passed"] = self.passed
        for c in out["checks"]:
            for key in ("max_abs", "max_rel"):
                if isinstance(c[key], float) and not math.isfinite(c[key]):
                    c[key] = str(c[key])
        return out


def resolve_device(name: str = "cpu") -> object:
    """A torch.device for ``cpu`` or ``cuda``; CUDA must be present."""
    import torch

    if name not in ("cpu", "cuda"):
        raise KernelError(f"unknown device {name!r}", hint="Use --device cpu or --device cuda.")
    if name == "cuda" and not torch.cuda.is_available():
        raise KernelError(
            "CUDA was requested but torch sees no GPU on this machine",
            hint="Run with --device cpu (the checks are the same), or install a CUDA build of "
            "torch "
            "on a machine with a GPU.",
        )
    return torch.device(name)


def load_verification(entry: Entry) -> object:
    """The ``VERIFICATION`` declared in ``<module>/verification.py``."""
    if entry.module is None:
        raise KernelError(
            f"{entry.technique} has no kernel: {entry.rationale}",
            hint="Techniques with form 'none' have nothing to verify.",
        )
    module = importlib.import_module(entry.module + ".verification")
    declared = getattr(module, "VERIFICATION", None)
    if declared is None:
        raise KernelError(
            f"{entry.module}.verification declares no VERIFICATION",
            hint="Declare VERIFICATION = Verification(...) in that module.",
        )
    return declared


def missing_requirements(entry: Entry) -> list[str]:
    """Optional modules a kernel's checks need that are not installed."""
    from kernels.checks import Verification

    declared = load_verification(entry)
    assert isinstance(declared, Verification)
    return [name for name in declared.requires if importlib.util.find_spec(name) is None]


def _sync(device: object) -> None:
    import torch

    if isinstance(device, torch.device) and device.type == "cuda":
        torch.cuda.synchronize(device)


def verify(entry: Entry, *, device: str = "cpu", only: Iterable[str] | None = None) -> Run:
    """Run the checks of ``entry`` (all, or those named in ``only``) on ``device``."""
    import torch

    from kernels.checks import Setting, Verification

    torch_device = resolve_device(device)
    declared = load_verification(entry)
    assert isinstance(declared, Verification)
    missing = [name for name in declared.requires if importlib.util.find_spec(name) is None]
    if missing:
        raise KernelError(
            f"the {entry.technique} kernel needs {', '.join(missing)}, which is not installed",
            hint="Install the optional extra: pip install 'techkg[triton]'.",
        )
    wanted = set(only) if only is not None else None
    dtype = getattr(torch, declared.dtype)
    setting = Setting(device=torch_device, dtype=dtype)  # type: ignore[arg-type]
    run = Run(
        technique=entry.technique,
        module=entry.module or "",
        form=entry.form,
        device=str(torch_device),
        dtype=declared.dtype,
        torch_version=torch.__version__,
        compares=declared.compares,
        started=dt.datetime.now(dt.UTC),
        ended=dt.datetime.now(dt.UTC),
    )
    for check in declared.checks:
        if wanted is not None and check.name not in wanted:
            continue
        _sync(torch_device)
        t0 = time.perf_counter()
        try:
            outcome = check.run(setting)
            _sync(torch_device)
            seconds = time.perf_counter() - t0
            passed = check.passed(outcome)
            max_abs, max_rel, detail = outcome.max_abs, outcome.max_rel, outcome.detail
        except Exception as exc:  # noqa: BLE001 - a crashing kernel is a failed check
            seconds = time.perf_counter() - t0
            passed, max_abs, max_rel = False, math.nan, math.nan
            detail = f"raised {type(exc).__name__}: {exc}"
        run.checks.append(
            CheckRun(
                check.name,
                check.claim,
                check.measure,
                check.tolerance,
                max_abs,
                max_rel,
                passed,
                seconds,
                check.gradients,
                detail,
            )
        )
    if wanted is not None and not run.checks:
        raise KernelError(
            f"{entry.technique} has no check named {', '.join(sorted(wanted))}",
            hint="Names: " + ", ".join(c.name for c in declared.checks),
        )
    run.ended = dt.datetime.now(dt.UTC)
    return run


def verify_many(
    selected: Iterable[Entry],
    *,
    device: str = "cpu",
    on_start: Callable[[Entry], None] | None = None,
    on_done: Callable[[Run], None] | None = None,
) -> list[Run]:
    """Verify each entry with code, in order; ``on_start``/``on_done`` report progress."""
    runs = []
    for item in selected:
        if not item.has_code:
            continue
        if on_start is not None:
            on_start(item)
        result = verify(item, device=device)
        runs.append(result)
        if on_done is not None:
            on_done(result)
    return runs
