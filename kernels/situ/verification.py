"""Declared verification of SiTU-GLU (β = 4, linear β = 25).

Compared: the fused ``situ_and_mul`` (hand-written backward, float32 compute) against
the elementwise formula under autograd, outputs and gradients. Properties: |out| < 100
even for huge inputs; it approaches SiLU(g)·u as β grows; bfloat16 input is computed
in float32.
"""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F

from kernels.checks import Verification, check
from kernels.families import FAR_FROM_UNIT
from kernels.measures import Outcome, Setting, compare, compare_forms, within, worst
from kernels.situ.fused import situ_and_mul
from kernels.situ.naive import BETA, BETA_LINEAR, naive_situ

SHAPES = ((3, 37, 48), (2, 45, 20), (1, 7, 16))
#: Input scales: the working range, and inputs near float32's largest values.
SCALES = (6.0, 6.0, 1e37)


@check("fused-vs-formula", 1e-6, gradients=True, covers=(FAR_FROM_UNIT,))
def fused_matches_formula(s: Setting) -> Outcome:
    """The fused SiTU-GLU equals the formula, outputs and gradients (random
    cotangents), also for inputs near float32's largest values."""
    results = []
    for i, (shape, scale) in enumerate(zip(SHAPES, SCALES, strict=True)):
        x = s.randn(*shape[:-1], 2 * shape[-1], gen=s.generator(i), scale=scale)
        results.append(
            compare_forms(
                lambda x: naive_situ(*x.chunk(2, -1)),
                situ_and_mul,
                (x,),
                (s.randn(*shape, gen=s.generator(10 + i)),),
                grads=("x",),
                tag=f"{shape} scale {scale:g}",
            )
        )
    return worst(results)


@check("bounded", 0.0, measure="abs", covers=(FAR_FROM_UNIT,))
def bounded(s: Setting) -> Outcome:
    """|SiTU(g, u)| <= 4 · 25 = 100 for any input (strictly below in exact
    arithmetic; float32 tanh saturates at the bound)."""
    x = s.randn(4096, 2, gen=s.generator(20), scale=1e4)
    peak = situ_and_mul(x).abs().max().item()
    return within(peak, BETA * BETA_LINEAR, f"max |out| {peak:.4g} over inputs of scale 1e4; bound 100")


@check("tends-to-swiglu", 1e-5)
def tends_to_swiglu(s: Setting) -> Outcome:
    """As beta grows SiTU tends to SiLU(g)·u."""
    x = s.randn(2000, 2, gen=s.generator(30), scale=3.0)
    g, u = x.unbind(-1)
    swiglu = (F.silu(g) * u)[:, None]
    errors = [compare(swiglu, situ_and_mul(x, beta=b, beta_linear=b)).max_abs for b in (4.0, 40.0, 4000.0)]
    shrinking = all(a > b for a, b in itertools.pairwise(errors))
    last = compare(swiglu, situ_and_mul(x, beta=4000.0, beta_linear=4000.0))
    detail = "error vs SiLU·u at beta 4, 40, 4000: " + ", ".join(f"{e:.2g}" for e in errors)
    if not shrinking:
        return Outcome(float("inf"), float("inf"), detail + " (not shrinking)")
    return Outcome(last.max_abs, last.max_rel, detail)


@check("bf16-fp32-compute", 0.0, measure="abs")
def bf16_computed_in_fp32(s: Setting) -> Outcome:
    """bfloat16 inputs are computed in float32 and rounded once."""
    x = s.randn(37, 96, gen=s.generator(40), scale=4.0).to(torch.bfloat16)
    gate, up = x.float().chunk(2, -1)
    expected = naive_situ(gate, up).to(torch.bfloat16)
    return compare(expected.float(), situ_and_mul(x).float(), "bf16 output vs fp32 compute rounded once")


VERIFICATION = Verification(
    "situ",
    __doc__ or "",
    (fused_matches_formula, bounded, tends_to_swiglu, bf16_computed_in_fp32),
    shapes=tuple("x".join(map(str, s)) for s in SHAPES),
)
