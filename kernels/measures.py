"""Measuring a check: the errors of a comparison, and a claim as a number.

A check is a function of a :class:`Setting` (device, dtype, seed) that returns an
:class:`Outcome`: the largest absolute error and the largest relative error of the
comparison it makes, the relative RMS error where tensors were compared, and what was
measured, in words. Relative error here is normwise: ``max|ref − out| / max|ref|``. A
numerical property ("uniform routing gives a loss of exactly 1") is an outcome too: the
measured value against the claimed one (:func:`against`), how far a bound is exceeded
(:func:`within`), an exact count (:func:`count`). Outputs of the wrong shape are a
measured failure (an infinite error), not an exception.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import torch

__all__ = [
    "Measure",
    "Outcome",
    "Pair",
    "Setting",
    "against",
    "compare",
    "compare_all",
    "compare_forms",
    "count",
    "gradients",
    "numbers_first",
    "random_cotangents",
    "shape_id",
    "within",
    "worst",
]

Measure = Literal["abs", "rel", "rms"]
#: A named (reference, output) pair, as :func:`compare_all` takes them.
Pair = tuple[str, torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class Setting:
    """Where a check runs. Inputs are drawn on the CPU from a seeded generator and then
    moved, so that the CPU and a GPU see the same numbers."""

    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    dtype: torch.dtype = torch.float32
    seed: int = 42

    def generator(self, offset: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed + offset)

    def randn(
        self,
        *shape: int,
        gen: torch.Generator,
        scale: float = 1.0,
        dtype: torch.dtype | None = None,
    ) -> torch.Tensor:
        x = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale
        return x.to(device=self.device, dtype=dtype or self.dtype)

    def rand(self, *shape: int, gen: torch.Generator, dtype: torch.dtype | None = None) -> torch.Tensor:
        x = torch.rand(*shape, generator=gen, dtype=torch.float64)
        return x.to(device=self.device, dtype=dtype or self.dtype)

    def randint(self, high: int, *shape: int, gen: torch.Generator) -> torch.Tensor:
        return torch.randint(high, shape, generator=gen).to(self.device)

    def tensor(self, data: object, dtype: torch.dtype | None = None) -> torch.Tensor:
        return torch.as_tensor(data, dtype=dtype or self.dtype, device=self.device)


@dataclass(frozen=True)
class Outcome:
    """The errors one check measured; ``detail`` says what was measured, in words."""

    max_abs: float
    max_rel: float
    detail: str = ""
    #: Relative RMS error ‖ref − out‖₂ / ‖ref‖₂ (FLA's ratio); None where no tensors
    #: were compared, and then the relative error stands for it.
    rms: float | None = None

    def error(self, measure: Measure) -> float:
        if measure == "abs":
            return self.max_abs
        if measure == "rms" and self.rms is not None:
            return self.rms
        return self.max_rel


def numbers_first(parts: Sequence[Callable[[], Outcome]], limit: float, measure: Measure = "rel") -> Outcome:
    """The worst outcome of ``parts``, run one after another. A part that raises does not
    hide the others: when another part already fails on its numbers (its error above
    ``limit``) that failure is the result, with the exception named in its detail; only
    when every part that returned passes does the first exception propagate (the check
    is broken: it has no number to fail on)."""
    outcomes: list[Outcome] = []
    errors: list[Exception] = []
    for part in parts:
        try:
            outcomes.append(part())
        except Exception as exc:  # noqa: BLE001 - re-raised below unless a number already fails
            errors.append(exc)
    result = worst(outcomes)
    error = result.error(measure)
    if errors and (math.isnan(error) or error <= limit):
        raise errors[0]
    if errors:
        note = f"; {len(errors)} part(s) also raised, first {type(errors[0]).__name__}: {errors[0]}"
        return Outcome(result.max_abs, result.max_rel, result.detail + note, result.rms)
    return result


def _as_tensor(x: torch.Tensor | float | Sequence[float]) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64).cpu()
    return torch.as_tensor(x, dtype=torch.float64)


def compare(ref: torch.Tensor | float, out: torch.Tensor | float, detail: str = "") -> Outcome:
    """Max absolute error and normwise relative error of ``out`` against ``ref``."""
    r, o = _as_tensor(ref), _as_tensor(out)
    if r.shape != o.shape:  # a measured difference: the output is not the reference's shape
        note = f"shapes differ: reference {tuple(r.shape)} vs {tuple(o.shape)}"
        return Outcome(math.inf, math.inf, f"{detail}: {note}" if detail else note, math.inf)
    if r.numel() == 0:
        return Outcome(0.0, 0.0, detail)
    bad = int((torch.isfinite(r) & ~torch.isfinite(o)).sum())
    if bad:  # the output overflowed or turned to NaN where the reference is finite
        note = f"{bad} non-finite values where the reference is finite"
        return Outcome(math.inf, math.inf, f"{detail}: {note}" if detail else note)
    same = (r == o) | (torch.isnan(r) & torch.isnan(o))
    diff = torch.where(same, torch.zeros_like(r), r - o)
    err = diff.abs().max().item()
    finite = r[torch.isfinite(r)]
    scale = finite.abs().max().item() if finite.numel() else 0.0
    rel = err / scale if scale > 0 else (0.0 if err == 0 else math.inf)
    norm = finite.norm().item() if finite.numel() else 0.0
    rms = diff.norm().item() / norm if norm > 0 else rel
    return Outcome(err, rel, detail, rms)


def worst(outcomes: Iterable[Outcome], detail: str = "") -> Outcome:
    """The largest absolute and relative errors over several comparisons; the detail
    is that of the comparison with the largest relative error."""
    items = list(outcomes)
    if not items:
        return Outcome(0.0, 0.0, detail)
    bad = max(items, key=lambda o: o.max_rel)
    return Outcome(max(o.max_abs for o in items), bad.max_rel, detail or bad.detail, _rms(items))


def _rms(items: Sequence[Outcome]) -> float | None:
    known = [o.rms for o in items if o.rms is not None]
    return max(known) if known else None


def compare_all(pairs: Iterable[Pair]) -> Outcome:
    """Compare named (reference, output) pairs; the detail names the worst one."""
    named = [(name, compare(ref, out)) for name, ref, out in pairs]
    if not named:
        return Outcome(0.0, 0.0)
    name, bad = max(named, key=lambda item: item[1].max_rel)
    return Outcome(
        max(o.max_abs for _, o in named),
        bad.max_rel,
        f"worst of {len(named)}: {name}",
        _rms([o for _, o in named]),
    )


def against(measured: float, expected: float, detail: str = "") -> Outcome:
    """A measured number against the value the claim states."""
    err = abs(float(measured) - float(expected))
    rel = err / abs(expected) if expected != 0 else err
    text = detail or f"measured {measured:.6g}, claimed {expected:.6g}"
    return Outcome(err, rel, text)


def within(measured: float, bound: float, detail: str = "") -> Outcome:
    """How far ``measured`` exceeds an upper ``bound`` (0 when the bound holds)."""
    excess = max(0.0, float(measured) - float(bound))
    rel = excess / abs(bound) if bound != 0 else excess
    return Outcome(excess, rel, detail or f"measured {measured:.6g}, bound {bound:.6g}")


def count(measured: int, expected: int, detail: str = "") -> Outcome:
    """An exact count: any difference fails a zero tolerance."""
    return against(float(measured), float(expected), detail or f"counted {measured}, claimed {expected}")


def shape_id(**dims: int) -> str:
    """A readable shape id in the tests' style: ``B2-T75-H2-D32``."""
    return "-".join(f"{k}{v}" for k, v in dims.items())


def _outputs(
    fn: Callable[..., torch.Tensor | tuple[torch.Tensor, ...]], tensors: Sequence[torch.Tensor]
) -> tuple[torch.Tensor, ...]:
    result = fn(*tensors)
    return result if isinstance(result, tuple) else (result,)


def gradients(
    fn: Callable[..., torch.Tensor | tuple[torch.Tensor, ...]],
    tensors: Sequence[torch.Tensor],
    cotangents: Sequence[torch.Tensor] | None = None,
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """Outputs of ``fn`` on fresh leaf copies of ``tensors``, and the gradients of
    Σ ⟨output, cotangent⟩ with respect to those leaves (zeros where unused).

    Without ``cotangents`` each output gets a random one (:func:`random_cotangents`):
    never all ones, so a backward that ignores or rescales the incoming gradient shows,
    and a scalar loss is scaled by a factor that is not 1."""
    leaves = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in tensors]
    outs = _outputs(fn, leaves)
    cots = cotangents if cotangents is not None else random_cotangents(outs)
    total = sum((o.float() * c.float()).sum() for o, c in zip(outs, cots, strict=True))
    needs = [leaf for leaf in leaves if leaf.requires_grad]
    grads = torch.autograd.grad(total, needs, allow_unused=True)  # type: ignore[arg-type]
    it = iter(grads)
    full = []
    for leaf in leaves:
        if leaf.requires_grad:
            grad = next(it)
            full.append(torch.zeros_like(leaf) if grad is None else grad)
        else:
            full.append(torch.zeros_like(leaf, dtype=torch.float32))
    return tuple(o.detach() for o in outs), tuple(full)


def random_cotangents(outputs: Sequence[torch.Tensor], seed: int = 7) -> list[torch.Tensor]:
    """A random cotangent for each output, drawn from ``seed`` and the outputs' shapes
    alone, so two forms with outputs of the same shapes get the same cotangents. A
    scalar output (a loss) gets a factor of magnitude in [0.5, 2], never 1."""
    gen = torch.Generator().manual_seed(seed)
    cots = []
    for o in outputs:
        if o.dim() == 0:
            c = (torch.rand((), generator=gen, dtype=torch.float64) * 1.5 + 0.5) * (
                1 - 2 * torch.randint(2, (), generator=gen)
            )
        else:
            c = torch.randn(o.shape, generator=gen, dtype=torch.float64)
        cots.append(c.to(device=o.device, dtype=torch.float32))
    return cots


def _named(names: Iterable[str], refs: Iterable[torch.Tensor], outs: Iterable[torch.Tensor], tag: str) -> list[Pair]:
    return [(f"{name} {tag}" if tag else name, ref, out) for name, ref, out in zip(names, refs, outs, strict=True)]


def compare_forms(
    reference: Callable[..., torch.Tensor | tuple[torch.Tensor, ...]],
    structured: Callable[..., torch.Tensor | tuple[torch.Tensor, ...]],
    inputs: Sequence[torch.Tensor],
    cotangents: Sequence[torch.Tensor] | None = None,
    *,
    outputs: Sequence[str] = ("out",),
    grads: Sequence[str] = (),
    extra: Iterable[Pair] = (),
    tag: str = "",
) -> Outcome:
    """Compare a structured form against its reference on the same ``inputs``.

    The pairs are, in order: the outputs, named by ``outputs`` (none when it is empty),
    the ``extra`` pairs, and, when ``grads`` names every input, the gradient ``d<name>``
    of each input (of Σ ⟨output, cotangent⟩, see :func:`gradients`). Without ``grads``
    both forms run forward only. A ``tag`` (a shape id) follows every name: ``"o B2-T45"``."""
    # In half precision the reference runs in float32 on the same (rounded) inputs, as
    # FLA's tests run their naive forms: the error measured is the structured form's.
    half = any(t.dtype in (torch.float16, torch.bfloat16) for t in inputs)
    ref_inputs = [t.float() if t.dtype in (torch.float16, torch.bfloat16) else t for t in inputs] if half else inputs
    if grads:
        outs1, g1 = gradients(reference, ref_inputs, cotangents)
        outs2, g2 = gradients(structured, inputs, cotangents)
        wrt = _named([f"d{name}" for name in grads], g1, g2, tag)
    else:
        outs1, outs2 = _outputs(reference, ref_inputs), _outputs(structured, inputs)
        wrt = []
    named = _named(outputs, outs1, outs2, tag) if outputs else []
    return compare_all([*named, *extra, *wrt])
