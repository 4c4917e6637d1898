"""Declared verification of fake quantisation with a straight-through estimator.

Compared: the hand-written STE against torch's fused fake-quantise operators, per
tensor (uint8-style, zero point 128) and per channel (int8, symmetric), values and
gradients, exactly. Properties: outputs lie on the quantisation grid; the gradient is 1
inside the range and 0 outside.
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.families import NON_DEFAULT_SCALE
from kernels.measures import Outcome, Setting, compare_all, count, gradients, worst
from kernels.qat.builtin import fake_quant
from kernels.qat.naive import fake_quant_ste

#: (name, scale, zero point, q_min, q_max, axis)
Case = tuple[str, float | tuple[float, ...], int | tuple[int, ...], int, int, int | None]
PER_TENSOR = ("per-tensor uint8", 0.05, 128, 0, 255, None)
CASES: tuple[Case, ...] = (
    PER_TENSOR,
    ("per-channel int8", (0.02, 0.05, 0.011), (0, 0, 0), -128, 127, 1),
)
SHAPE = (75, 3)
#: Levels at and around the edges of the range, relative to q_min and q_max: the last
#: levels inside, the first outside, and values just inside and outside the rounding
#: boundary of each edge.
EDGES = ((0.0, 0.0), (0.0, -1.0), (-1.0, 0.0), (0.49, -0.49), (-0.51, 0.51), (-0.49, 0.49))


def _x(s: Setting, offset: int, case: Case = PER_TENSOR) -> torch.Tensor:
    """Random values wide enough that a good share fall outside the range, and rows
    placed on the range's edges (per channel, with that channel's scale)."""
    _, scale, zp, lo, hi, axis = case
    channels = SHAPE[1]
    sc = torch.as_tensor(scale, dtype=torch.float64).expand(channels)
    z = torch.as_tensor(zp, dtype=torch.float64).expand(channels)
    rows = [(lo + a - z) * sc for a, _ in EDGES] + [(hi + b - z) * sc for _, b in EDGES]
    edges = torch.stack(rows).to(s.device, s.dtype)
    return torch.cat([s.randn(*SHAPE, gen=s.generator(offset), scale=4.0), edges])


@check("ste-vs-torch", 0.0, measure="abs", gradients=True, covers=(NON_DEFAULT_SCALE,))
def ste_matches_builtin(s: Setting) -> Outcome:
    """The hand-written STE equals torch's fake-quantise operators, values and
    gradients, exactly."""
    results = []
    for i, (name, scale, zp, lo, hi, axis) in enumerate(CASES):
        x = _x(s, i, CASES[i])
        cot = (s.randn(*x.shape, gen=s.generator(10 + i)),)
        quant = (scale, zp, lo, hi, axis)
        (o1,), (g1,) = gradients(lambda x, q=quant: fake_quant_ste(x, *q), (x,), cot)
        (o2,), (g2,) = gradients(lambda x, q=quant: fake_quant(x, *q), (x,), cot)
        results.append(compare_all([(f"value {name}", o2, o1), (f"grad {name}", g2, g1)]))
    return worst(results)


@check("on-the-grid", 1e-4, measure="abs", covers=(NON_DEFAULT_SCALE,))
def on_the_grid(s: Setting) -> Outcome:
    """Every fake-quantised value lies on the quantisation grid, inside the range."""
    results = []
    for i, (name, scale, zp, lo, hi, axis) in enumerate(CASES):
        out = fake_quant_ste(_x(s, 20 + i, CASES[i]), scale, zp, lo, hi, axis)
        sc = torch.as_tensor(scale, dtype=out.dtype, device=out.device)
        z = torch.as_tensor(zp, dtype=out.dtype, device=out.device)
        if axis is not None:
            sc, z = sc.view(1, -1), z.view(1, -1)
        level = out / sc + z
        off_grid = (level - level.round()).abs().max().item()
        outside = int(((level.round() < lo) | (level.round() > hi)).sum())
        results.append(worst([count(outside, 0, f"{name}: levels outside [{lo}, {hi}]")]))
        results.append(Outcome(off_grid, off_grid, f"{name}: distance of x/s + z from an integer"))
    return worst(results, "every output is (integer level − z)·s with the level inside the range")


@check("gradient-mask", 0.0, measure="abs", gradients=True)
def gradient_is_range_mask(s: Setting) -> Outcome:
    """The gradient is 1 inside the range and 0 outside."""
    name, scale, zp, lo, hi, axis = PER_TENSOR
    x = _x(s, 30)
    # A unit cotangent: the gradient is then the Jacobian's diagonal, the mask itself.
    _, (grad,) = gradients(lambda x: fake_quant_ste(x, scale, zp, lo, hi, axis), (x,), (torch.ones_like(x),))
    level = torch.round(x / scale) + zp
    inside = (level >= lo) & (level <= hi)
    ones = int((grad[inside] == 1).sum())
    zeros = int((grad[~inside] == 0).sum())
    wrong = (int(inside.sum()) - ones) + (int((~inside).sum()) - zeros)
    return count(wrong, 0, f"{ones} in-range values with gradient 1, {zeros} clamped values with gradient 0")


VERIFICATION = Verification(
    "qat",
    __doc__ or "",
    (ste_matches_builtin, on_the_grid, gradient_is_range_mask),
    shapes=("x".join(map(str, SHAPE)) + f" random, {2 * len(EDGES)} rows on the range edges",),
)
