"""Mutation testing of the declared verifications: plant one realistic bug, see it caught.

Each kernel folder declares ``MUTANTS`` in ``kernels/<name>/mutants.py``: small bugs of
the kind a person makes in its structured form (an off-by-one in a cumulative sum, a
missing scale, the wrong softmax axis, a skipped reduction, a swapped index). A
:class:`Mutant` is a source edit of one function or method: ``find`` must occur in its
source exactly once and is replaced by ``replace``. Applying it compiles the edited
source in the function's own module and puts the result wherever the original is
bound in the ``kernels`` package (the module attribute, names imported elsewhere with
``from … import``, default arguments), and puts everything back afterwards.

A mutant names the declared check that exists to catch it. :func:`run_mutant` runs that
check first, then the others until one fails; the mutant is *killed* only when a check
fails on its numbers, not when the mutated code raises (that is *crashed*), and it
*survived* when every check passed. The checks run as the default suite runs them: in
the kernel's dtype and in every half precision they claim.

A mutant also names the *kind* of weakness it probes (:data:`KINDS`): the seven ways a
verification can be blind (a reference that shares the code it checks, an expected value
taken from the code under test, inputs too kind to show the bug, memory counted after the
fact, statistics that cannot fail, a precision path never run, a crash taken for a
catch), or ``plain`` for an ordinary bug in the structured form.

Simulated ranks run in threads of this process, so they see an applied mutant; gloo
ranks are separate processes, and :func:`kernels.distributed.run_gloo` applies the
active mutants in each of them (see :func:`active`).
"""

from __future__ import annotations
import __future__

import contextlib
import importlib
import inspect
import linecache
import sys
import textwrap
import time
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from kernels.registry import Entry
from kg.errors import KernelError

__all__ = [
    "KINDS",
    "Mutant",
    "MutantRun",
    "active",
    "applied",
    "declared_mutants",
    "run_mutant",
]

Verdict = Literal["killed", "crashed", "survived"]

#: The kinds of weakness a mutant probes, each with the rule of the verification it tests.
KINDS: dict[str, str] = {
    "plain": "an ordinary bug in the structured form",
    "independent-reference": "a bug in a helper the structured form uses: the reference must not share it",
    "expected-value": "a wrong capacity, size, count or bound: the check computes the expected value itself",
    "adversarial-input": "a bug only an adversarial input family shows (kernels.families)",
    "peak-memory": "memory held in the middle of a step and released before its end",
    "statistics": "a sampler or standard error that a loose statistical check would pass",
    "low-precision": "a bug only the half-precision path shows, run by default",
    "numbers-not-crashes": "a bug that used to end the check in an exception; it must fail on a number",
}


@dataclass(frozen=True)
class Mutant:
    """One planted bug: replace ``find`` by ``replace`` in the source of ``target``."""

    name: str
    #: The bug in words, as a reviewer would describe it.
    bug: str
    #: ``module:qualname`` of the function or method edited, e.g.
    #: ``kernels.gated_deltanet.chunk:chunk_gated_delta_rule``.
    target: str
    find: str
    replace: str
    #: The declared check that exists to catch this bug.
    check: str
    #: The weakness it probes (a key of :data:`KINDS`).
    kind: str = "plain"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"mutant {self.name!r}: unknown kind {self.kind!r}; use one of {sorted(KINDS)}")

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def qualname(self) -> str:
        return self.target.partition(":")[2]


@dataclass
class MutantRun:
    technique: str
    mutant: str
    bug: str
    check: str
    verdict: Verdict
    #: The check that failed on its numbers (empty unless killed).
    killed_by: str
    error: float
    tolerance: float
    detail: str
    seconds: float
    kind: str = "plain"
    #: The dtype of the check run that killed it (empty unless killed).
    dtype: str = ""

    @property
    def killed(self) -> bool:
        return self.verdict == "killed"


def declared_mutants(entry: Entry) -> tuple[Mutant, ...]:
    """The ``MUTANTS`` of ``<module>/mutants.py`` (empty when the folder declares none)."""
    if entry.module is None:
        return ()
    try:
        module = importlib.import_module(entry.module + ".mutants")
    except ModuleNotFoundError as exc:
        if exc.name == entry.module + ".mutants":
            return ()
        raise
    return tuple(getattr(module, "MUTANTS", ()))


def _resolve(mutant: Mutant) -> tuple[types.ModuleType, object, str, Any]:
    """(module, owner of the attribute, attribute name, original object)."""
    module = importlib.import_module(mutant.module)
    owner: object = module
    *path, attr = mutant.qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    raw = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
    return module, owner, attr, raw


def _mutated(mutant: Mutant, module: types.ModuleType, attr: str, raw: Any) -> Any:
    func = raw.__func__ if isinstance(raw, staticmethod | classmethod) else raw
    source = textwrap.dedent(inspect.getsource(func))
    found = source.count(mutant.find)
    if found != 1:
        raise KernelError(
            f"mutant {mutant.name!r}: {mutant.find!r} occurs {found} times in {mutant.target}",
            hint="The code changed under the mutant: update find/replace in its mutants.py.",
        )
    edited = source.replace(mutant.find, mutant.replace)
    filename = f"<mutant {mutant.name} of {mutant.target}>"
    # so that tracebacks and inspect show the mutated source
    linecache.cache[filename] = (len(edited), None, edited.splitlines(True), filename)
    code = compile(
        edited,
        filename,
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    namespace: dict[str, Any] = {}
    exec(code, module.__dict__, namespace)  # noqa: S102 - the project's own source, edited
    return namespace[attr]


def _rebind(original: Any, replacement: Any) -> list[tuple[Any, str, Any]]:
    """Bind ``replacement`` wherever the kernels package binds ``original``; returns
    (owner, attribute, old value) for undoing."""
    undo: list[tuple[Any, str, Any]] = []
    for name, module in list(sys.modules.items()):
        if not (name == "kernels" or name.startswith("kernels.")) or module is None:
            continue
        for key, value in list(vars(module).items()):
            if value is original:
                setattr(module, key, replacement)
                undo.append((module, key, value))
            elif isinstance(value, types.FunctionType):
                _rebind_defaults(value, original, replacement, undo)
    return undo


def _rebind_defaults(fn: types.FunctionType, original: Any, replacement: Any, undo: list[tuple[Any, str, Any]]) -> None:
    if fn.__defaults__ and any(d is original for d in fn.__defaults__):
        undo.append((fn, "__defaults__", fn.__defaults__))
        fn.__defaults__ = tuple(replacement if d is original else d for d in fn.__defaults__)
    if fn.__kwdefaults__ and any(d is original for d in fn.__kwdefaults__.values()):
        undo.append((fn, "__kwdefaults__", fn.__kwdefaults__))
        fn.__kwdefaults__ = {k: replacement if d is original else d for k, d in fn.__kwdefaults__.items()}


_ACTIVE: list[Mutant] = []


def active() -> tuple[Mutant, ...]:
    """The mutants applied in this process right now (passed on to gloo ranks)."""
    return tuple(_ACTIVE)


@contextlib.contextmanager
def applied(mutants: Mutant | Iterable[Mutant]) -> Iterator[None]:
    """Apply mutants for the duration of the block; the code is restored afterwards."""
    items = [mutants] if isinstance(mutants, Mutant) else list(mutants)
    undo: list[tuple[Any, str, Any]] = []
    try:
        for mutant in items:
            module, owner, attr, raw = _resolve(mutant)
            replacement = _mutated(mutant, module, attr, raw)
            if isinstance(owner, type):
                undo.append((owner, attr, raw))
                setattr(owner, attr, replacement)
            else:
                undo += _rebind(raw, replacement)
            _ACTIVE.append(mutant)
        _clear_caches()
        yield
    finally:
        for owner, key, value in reversed(undo):
            setattr(owner, key, value)
        del _ACTIVE[len(_ACTIVE) - len(items) :]
        _clear_caches()


def _clear_caches() -> None:
    """Empty the ``functools.cache`` of every kernels function: what they memoised (a
    jitted Triton kernel, say) was built from the code before or during the mutant."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "kernels" or name.startswith("kernels.")):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and hasattr(value, "cache_info"):
                clear()


def run_mutant(entry: Entry, mutant: Mutant, *, device: str = "cpu") -> MutantRun:
    """Apply ``mutant`` and run the declared checks, the one named by the mutant first,
    until one fails on its numbers."""
    from kernels.checks import Verification
    from kernels.verify import declared_checks, load_verification, resolve_device, triton_interpreter_first, verify

    triton_interpreter_first(resolve_device(device))  # before a mutant imports Triton's source
    declared = load_verification(entry)
    assert isinstance(declared, Verification)
    names = [c.name for c in declared_checks(entry, declared)]
    if mutant.check not in names:
        raise KernelError(
            f"mutant {mutant.name!r} of {entry.technique} names no declared check {mutant.check!r}",
            hint="Checks: " + ", ".join(names),
        )
    order = [mutant.check, *(n for n in names if n != mutant.check)]
    t0 = time.perf_counter()
    crashed: list[str] = []
    first = None
    with applied(mutant):
        for name in order:
            for result in verify(entry, device=device, only=[name]).checks:
                first = first or result
                if not result.passed and not result.raised:
                    return MutantRun(
                        entry.technique,
                        mutant.name,
                        mutant.bug,
                        mutant.check,
                        "killed",
                        name,
                        result.error,
                        result.tolerance,
                        result.detail,
                        time.perf_counter() - t0,
                        mutant.kind,
                        result.dtype,
                    )
                if result.raised:
                    crashed.append(f"{name} ({result.dtype}): {result.detail}")
    assert first is not None
    return MutantRun(
        entry.technique,
        mutant.name,
        mutant.bug,
        mutant.check,
        "crashed" if crashed else "survived",
        "",
        first.error,
        first.tolerance,
        "; ".join(crashed) if crashed else first.detail,
        time.perf_counter() - t0,
        mutant.kind,
    )
