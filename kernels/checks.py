"""What a declared verification is made of: checks, their setup as data, the claims.

Every kernel folder declares one :class:`Verification` in its ``verification.py``: what
is compared, the dtype and shapes, whether gradients are compared, and a list of
:class:`Check` objects. A check is a function of a :class:`Setting` that returns an
:class:`Outcome` (:mod:`kernels.measures`). It passes when the error it names
(``measure``) is at most its ``tolerance``. In float16 and bfloat16 a check that declares
a tolerance there is judged by the relative RMS error, as FLA judges its kernels
(``‖ref − out‖₂ / ‖ref‖₂``); declaring one is the kernel's claim of a low-precision path,
and the default run checks it there too.

Setup is data: a comparison of two forms is declared with :func:`comparison` from its
cases (:class:`Case`: named dimensions and the adversarial families of
:mod:`kernels.families` they exercise), a draw of inputs per case, the outputs and
gradients compared and the tolerances; a property is a function declared with
:func:`check`, whose docstring is its claim. Every check states the families it covers.
The measuring functions of :mod:`kernels.measures` are re-exported here.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch

from kernels.families import FAMILIES, FAR_FROM_UNIT
from kernels.measures import Measure, Outcome, Setting, compare_forms, numbers_first

__all__ = ["HALF", "Case", "Check", "Drawn", "Verification", "case", "check", "comparing", "comparison"]


@dataclass(frozen=True)
class Check:
    """One comparison or one numerical property, with the claim it stands for."""

    name: str
    claim: str
    run: Callable[[Setting], Outcome]
    tolerance: float
    measure: Measure = "rel"
    gradients: bool = False
    #: Tolerances in other dtypes than the verification's own (``float16``,
    #: ``bfloat16``), where the check means something there (FLA's, Liger's ...).
    tolerances: Mapping[str, float] = field(default_factory=dict)
    #: The adversarial input families (:data:`kernels.families.FAMILIES`) it exercises.
    covers: tuple[str, ...] = ()
    #: For a stochastic check: the probability, bounded by the check's own statistics,
    #: that it fails when the kernel is right.
    false_failure: float | None = None
    #: A comparison's cases (its setup as data).
    cases: tuple[Case, ...] = ()

    def __post_init__(self) -> None:
        unknown = [f for f in self.covers if f not in FAMILIES]
        if unknown:
            raise ValueError(f"check {self.name!r} covers unknown families {unknown}; known: {sorted(FAMILIES)}")

    def tolerance_for(self, dtype: str, declared: str = "float32") -> float | None:
        """The tolerance in ``dtype``; None when the check declares none for it."""
        if dtype == declared:
            return self.tolerance
        return self.tolerances.get(dtype)

    def passed(self, outcome: Outcome, tolerance: float | None = None, measure: Measure | None = None) -> bool:
        error = outcome.error(measure or self.measure)
        limit = self.tolerance if tolerance is None else tolerance
        return not math.isnan(error) and error <= limit


@dataclass(frozen=True)
class Verification:
    """A kernel folder's declaration of what its checks establish."""

    technique: str
    compares: str
    checks: tuple[Check, ...]
    #: The shapes, in words; by default the ids of the comparisons' cases.
    shapes: tuple[str, ...] = ()
    dtype: str = "float32"
    #: Importable modules the checks need beyond torch (e.g. ``triton``).
    requires: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "compares", _compared(self.compares))
        if not self.shapes:
            ids = [c.id for check in self.checks for c in check.cases]
            object.__setattr__(self, "shapes", tuple(dict.fromkeys(ids)))

    @property
    def gradients(self) -> bool:
        """Whether some check compares gradients."""
        return any(c.gradients for c in self.checks)

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"{self.technique} declares no check {name!r}")

    @property
    def low_precision(self) -> tuple[str, ...]:
        """The half precisions some check claims (declares a tolerance for)."""
        return tuple(d for d in HALF if any(d in c.tolerances for c in self.checks))

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(sorted({f for c in self.checks for f in c.covers}))


def _compared(text: str) -> str:
    """What a verification compares, from its module docstring: the paragraph that begins
    "Compared:" (without the word), else the first paragraph; on one line."""
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n")]
    found = next((p for p in paragraphs if p.startswith("Compared:")), paragraphs[0])
    return found.removeprefix("Compared:").strip()


#: The low-precision dtypes a check can claim.
HALF = ("float16", "bfloat16")


def check(
    name: str,
    tolerance: float,
    *,
    measure: Measure = "rel",
    gradients: bool = False,
    tolerances: Mapping[str, float] | None = None,
    covers: Sequence[str] = (),
    false_failure: float | None = None,
) -> Callable[[Callable[[Setting], Outcome]], Check]:
    """Declare a property check: the decorated function measures it, and the first
    paragraph of its docstring is the claim it stands for."""

    def declare(run: Callable[[Setting], Outcome]) -> Check:
        claim, limits = _claim(name, run), dict(tolerances or {})
        return Check(name, claim, run, tolerance, measure, gradients, limits, tuple(covers), false_failure)

    return declare


def _claim(name: str, fn: Callable[..., object]) -> str:
    """The first paragraph of a function's docstring, on one line."""
    claim = " ".join((inspect.getdoc(fn) or "").split("\n\n")[0].split())
    if not claim:
        raise ValueError(f"check {name!r}: its function {fn.__name__} needs a docstring stating the claim")
    return claim


@dataclass(frozen=True)
class Case:
    """One setting of a comparison: named dimensions (``case.T``) and the adversarial
    families it exercises."""

    dims: tuple[tuple[str, Any], ...]
    families: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        for key, value in self.__dict__["dims"]:
            if key == name:
                return value
        raise AttributeError(name)

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.dims).get(name, default)

    @property
    def id(self) -> str:
        """A readable id in the tests' style: ``B2-T75-H2-D32``, with the families' names."""
        tag = "-".join(f"{k}{v}" for k, v in self.dims)
        return f"{tag} [{', '.join(self.families)}]" if self.families else tag


def case(*families: str, **dims: Any) -> Case:
    """A :class:`Case` from its dimensions and the families it belongs to."""
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; known: {sorted(FAMILIES)}")
    return Case(tuple(dims.items()), tuple(families))


@dataclass(frozen=True)
class Drawn:
    """The inputs a draw made for one case: the tensors both forms differentiate, and
    the context handed to both forms first (the case itself when None)."""

    inputs: tuple[torch.Tensor, ...]
    context: Any = None
    cotangents: tuple[torch.Tensor, ...] | None = None


#: A form as a comparison calls it: ``form(context, *inputs)``.
Form = Callable[..., "torch.Tensor | tuple[torch.Tensor, ...]"]
Draw = Callable[[Setting, Case, torch.Generator], "Drawn | tuple[torch.Tensor, ...]"]


def comparison(
    name: str,
    claim: str,
    reference: Form,
    structured: Form,
    draw: Draw,
    cases: Sequence[Case],
    *,
    outputs: Sequence[str] = ("out",),
    grads: Sequence[str] = (),
    tolerance: float = 1e-5,
    measure: Measure = "rel",
    tolerances: Mapping[str, float] | None = None,
    covers: Sequence[str] = (),
    offset: int = 0,
) -> Check:
    """Declare a comparison of two forms over ``cases``.

    For case i, ``draw(setting, case, setting.generator(offset + i))`` makes the inputs
    and both forms run as ``form(context, *inputs)``; the outputs (named by
    ``outputs``) and, when ``grads`` names the inputs, their gradients under random
    cotangents are compared (:func:`compare_forms`). The check covers the families of
    its cases and ``covers``."""

    def one(s: Setting, i: int, c: Case) -> Outcome:
        drawn = draw(s, c, s.generator(offset + i))
        if not isinstance(drawn, Drawn):
            drawn = Drawn(tuple(drawn))
        context = c if drawn.context is None else drawn.context
        return compare_forms(
            partial(reference, context),
            partial(structured, context),
            drawn.inputs,
            drawn.cotangents,
            outputs=outputs,
            grads=grads,
            tag=c.id,
        )

    def run(s: Setting) -> Outcome:
        half = s.dtype in (torch.float16, torch.bfloat16)
        limit = (tolerances or {}).get(str(s.dtype).removeprefix("torch."), tolerance)
        judged: Measure = "rms" if half else measure
        # Inputs of norm 1e-4 or 1e4 are outside what half precision holds (float16 overflows
        # at 65504, and so do the squares and reciprocal gradients of such inputs).
        chosen = [(i, c) for i, c in enumerate(cases) if not (half and FAR_FROM_UNIT in c.families)]
        return numbers_first([partial(one, s, i, c) for i, c in chosen], limit, judged)

    families = tuple(sorted({f for c in cases for f in c.families} | set(covers)))
    tolerances = dict(tolerances or {})
    return Check(name, claim, run, tolerance, measure, bool(grads), tolerances, families, cases=tuple(cases))


def comparing(
    name: str, reference: Form, structured: Form, cases: Sequence[Case], **options: Any
) -> Callable[[Draw], Check]:
    """Declare a :func:`comparison` by decorating its draw: the draw's docstring is the claim."""

    def declare(draw: Draw) -> Check:
        return comparison(name, _claim(name, draw), reference, structured, draw, cases, **options)

    return declare

