"""Run the declared verifications and report, per check, the errors, tolerance and time.

``verify(entry, device=...)`` imports ``<module>.verification``, runs each check on
the device and returns a :class:`Run`. By default every check runs in the
verification's dtype and again in each half precision it claims (declares a tolerance
for); ``dtype=`` picks one. A check that raises is *broken*: it failed without a number,
its exception is its detail, and it fails the run (one broken kernel never hides the
others). On CUDA the clock is read after a device synchronisation, so the durations
are kernel timings.

Besides its declared checks, a kernel whose naive form is written with the pinned
formulas of :mod:`kernels.formulas` runs those pins as the check ``reference-formulas``
(:func:`declared_checks`).

``kernels.record`` writes runs into the graph.
"""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.util
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from kernels.registry import Entry
from kg.errors import KernelError

if TYPE_CHECKING:
    import torch

    from kernels.checks import Check, Verification
    from kernels.measures import Outcome, Setting

__all__ = [
    "DTYPES",
    "CheckRun",
    "Run",
    "declared_checks",
    "load_verification",
    "missing_requirements",
    "resolve_device",
    "resolve_dtype",
    "triton_interpreter_first",
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
    #: True when the check raised instead of returning its numbers.
    raised: bool = False
    dtype: str = "float32"
    rms: float | None = None
    #: The adversarial input families the check exercises.
    covers: tuple[str, ...] = ()
    #: A stochastic check's stated bound on failing a correct kernel.
    false_failure: float | None = None

    @property
    def status(self) -> str:
        """passed, failed (on its numbers) or broken (it raised)."""
        return "broken" if self.raised else "passed" if self.passed else "failed"

    @property
    def error(self) -> float:
        if self.measure == "abs":
            return self.max_abs
        if self.measure == "rms" and self.rms is not None:
            return self.rms
        return self.max_rel


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
    def broken(self) -> list[CheckRun]:
        """The checks that raised instead of returning their numbers."""
        return [c for c in self.checks if c.raised]

    @property
    def families(self) -> list[str]:
        return sorted({f for c in self.checks for f in c.covers})

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.checks)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["started"] = self.started.isoformat()
        out["ended"] = self.ended.isoformat()
        out["passed"] = self.passed
        out["broken"] = len(self.broken)
        out["families"] = self.families
        for c, check in zip(out["checks"], self.checks, strict=True):
            c["status"] = check.status
            c["covers"] = list(check.covers)
            for key in ("max_abs", "max_rel", "rms"):
                if isinstance(c[key], float) and not math.isfinite(c[key]):
                    c[key] = str(c[key])
        return out


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def resolve_device(name: str = "cpu") -> torch.device:
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


#: The dtypes a verification can run in: float32 (every check) and the two half
#: precisions, for the checks that declare a tolerance for them.
DTYPES = ("float32", "float16", "bfloat16")
HALF = ("float16", "bfloat16")


def declared_checks(entry: Entry, declared: Verification) -> tuple[Check, ...]:
    """The verification's checks, and ``reference-formulas`` when its naive form (or a
    naive form it builds on) uses the pinned formulas of :mod:`kernels.formulas`."""
    from kernels.checks import Check

    used = _formulas_used(entry)
    if not used:
        return declared.checks
    from kernels.formulas import PINS

    pins = [p for p in PINS if p.formula in used]
    names = ", ".join(sorted({p.formula.__name__ for p in pins}))

    def run(s: Setting) -> Outcome:
        import torch

        from kernels.measures import compare, worst

        return worst(
            [compare(torch.tensor(p.expected, dtype=torch.float64), p.compute(), p.statement) for p in pins],
            f"{len(pins)} pins of {names}",
        )

    claim = (
        f"The formulas the naive form is written with ({names}) give the published formulas' values "
        "at literal inputs worked out by hand."
    )
    return (*declared.checks, Check("reference-formulas", claim, run, tolerance=1e-12, measure="abs"))


def _formulas_used(entry: Entry) -> set[object]:
    """Functions of kernels.formulas named in the kernel's naive module, or in the naive
    modules it imports from, recursively."""
    import sys

    try:
        if entry.module is None or importlib.util.find_spec(entry.module + ".naive") is None:
            return set()
    except ModuleNotFoundError:  # the kernel package itself is missing (a test's stand-in)
        return set()
    todo, seen, used = [entry.module + ".naive"], set(), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        module = importlib.import_module(name)
        for value in vars(module).values():
            home = getattr(value, "__module__", None)
            if home == "kernels.formulas" and callable(value):
                used.add(value)
            elif isinstance(home, str) and home.endswith(".naive") and home in sys.modules:
                todo.append(home)
    formulas = sys.modules["kernels.formulas"] if used else None
    for fn in list(used):  # and the formulas those are written with
        names = getattr(getattr(fn, "__code__", None), "co_names", ())
        used.update(getattr(formulas, n) for n in names if callable(getattr(formulas, n, None)) and n != "Pin")
    return used


def resolve_dtype(name: str) -> str:
    """The canonical dtype name for ``float32``/``fp32``, ``float16``/``fp16``, ``bfloat16``/``bf16``."""
    aliases = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}
    canonical = aliases.get(name, name)
    if canonical not in DTYPES and canonical != "float64":
        raise KernelError(f"unknown dtype {name!r}", hint="Use --dtype float32, float16 or bfloat16.")
    return canonical


def missing_requirements(entry: Entry) -> list[str]:
    """Optional modules a kernel's checks need that are not installed."""
    from kernels.checks import Verification

    declared = load_verification(entry)
    assert isinstance(declared, Verification)
    return [name for name in declared.requires if importlib.util.find_spec(name) is None]


def triton_interpreter_first(device: torch.device) -> None:
    """On the CPU, import Triton in its interpreter mode before anything imports it
    compiled: Triton fixes the mode at its first import, and torch._dynamo imports it.
    (The Triton check can still run in a fresh process when this comes too late.)"""
    import os
    import sys

    if device.type != "cpu" or "triton" in sys.modules or importlib.util.find_spec("triton") is None:
        return
    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        importlib.import_module("triton.language")
    finally:
        if previous is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = previous


def _sync(device: object) -> None:
    import torch

    if isinstance(device, torch.device) and device.type == "cuda":
        torch.cuda.synchronize(device)


def _run_check(check: Check, declared: Verification, requested: str, device: torch.device) -> CheckRun:
    """Run one check in ``requested`` dtype when it declares a tolerance there, else in
    the verification's own dtype."""
    import torch

    from kernels.measures import Setting

    declares = check.tolerance_for(requested, declared.dtype) is not None
    in_dtype = requested if declares else declared.dtype
    tolerance = check.tolerance_for(in_dtype, declared.dtype)
    assert tolerance is not None
    setting = Setting(device=device, dtype=getattr(torch, in_dtype))
    _sync(device)
    t0 = time.perf_counter()
    raised = False
    rms: float | None = None
    try:
        outcome = check.run(setting)
        passed = check.passed(outcome, tolerance, "rms" if in_dtype in HALF else None)
        try:
            _sync(device)
        except Exception as exc:
            # A device-side assert (an index out of range in a CUDA kernel) surfaces at the
            # next synchronisation, after the numbers already read back: numbers that fail
            # still fail the check; numbers that pass do not make it pass.
            if passed:
                raise
            outcome = replace(outcome, detail=f"{outcome.detail}; then the device failed: {type(exc).__name__}")
        seconds = time.perf_counter() - t0
        max_abs, max_rel, detail = outcome.max_abs, outcome.max_rel, outcome.detail
        rms = outcome.rms
    except Exception as exc:  # noqa: BLE001 - a crashing kernel is a failed check
        seconds = time.perf_counter() - t0
        passed, max_abs, max_rel, raised = False, math.nan, math.nan, True
        detail = f"raised {type(exc).__name__}: {exc}"
    return CheckRun(
        check.name,
        check.claim,
        "rms" if in_dtype in HALF else check.measure,
        tolerance,
        max_abs,
        max_rel,
        passed,
        seconds,
        check.gradients,
        detail,
        raised,
        in_dtype,
        rms,
        check.covers,
        check.false_failure,
    )


def verify(
    entry: Entry,
    *,
    device: str = "cpu",
    only: Iterable[str] | None = None,
    dtype: str | None = None,
) -> Run:
    """Run the checks of ``entry`` (all, or those named in ``only``) on ``device``.

    Without ``dtype`` every check runs in the kernel's declared dtype and again in each
    half precision it declares a tolerance for. ``dtype`` (``float32``, ``float16``,
    ``bfloat16``) runs the checks that declare a tolerance for it in that dtype, at that
    tolerance, and the others once in the kernel's declared dtype."""
    import torch

    from kernels.checks import Verification

    torch_device = resolve_device(device)
    triton_interpreter_first(torch_device)
    declared = load_verification(entry)
    assert isinstance(declared, Verification)
    missing = [name for name in declared.requires if importlib.util.find_spec(name) is None]
    if missing:
        raise KernelError(
            f"the {entry.technique} kernel needs {', '.join(missing)}, which is not installed",
            hint="Install the optional extra: pip install 'techkg[triton]'.",
        )
    wanted = set(only) if only is not None else None
    requested = resolve_dtype(dtype or declared.dtype)
    checks = declared_checks(entry, declared)
    run = Run(
        technique=entry.technique,
        module=entry.module or "",
        form=entry.form,
        device=str(torch_device),
        dtype=requested,
        torch_version=torch.__version__,
        compares=declared.compares,
        started=dt.datetime.now(dt.UTC),
        ended=dt.datetime.now(dt.UTC),
    )
    # The checks' tensors are small: one thread is faster than several, and leaves the
    # other cores to whatever else runs.
    threads = torch.get_num_threads()
    if torch_device.type == "cpu":
        torch.set_num_threads(1)
    try:
        for check in checks:
            if wanted is not None and check.name not in wanted:
                continue
            run.checks.append(_run_check(check, declared, requested, torch_device))
            if dtype is None:  # the default run: every half precision the check claims
                for half in HALF:
                    if half in check.tolerances and half != requested:
                        run.checks.append(_run_check(check, declared, half, torch_device))
    finally:
        torch.set_num_threads(threads)
    if wanted is not None and not run.checks:
        raise KernelError(
            f"{entry.technique} has no check named {', '.join(sorted(wanted))}",
            hint="Names: " + ", ".join(c.name for c in checks),
        )
    # the dtypes the run stands for: the one asked for, if any check could run in it;
    # by default the declared dtype and every half precision some check ran in
    ran = [d for d in (declared.dtype, *HALF) if any(c.dtype == d for c in run.checks)]
    if dtype is None:
        run.dtype = "+".join(ran) or declared.dtype
    else:
        run.dtype = requested if any(c.dtype == requested for c in run.checks) else declared.dtype
    run.ended = dt.datetime.now(dt.UTC)
    return run


def verify_many(
    selected: Iterable[Entry],
    *,
    device: str = "cpu",
    dtype: str | None = None,
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
        result = verify(item, device=device, dtype=dtype)
        runs.append(result)
        if on_done is not None:
            on_done(result)
    return runs
