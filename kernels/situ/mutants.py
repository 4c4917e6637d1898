"""Bugs a person makes in the fused SiTU-GLU with a hand-written backward."""

from __future__ import annotations

from kernels.mutation import Mutant

_FN = "kernels.situ.fused:_SiTUAndMul"

MUTANTS = (
    Mutant(
        "backward-ignores-cotangent",
        "the backward drops the incoming gradient (right only for a unit cotangent)",
        f"{_FN}.backward",
        "do = grad.float()",
        "do = torch.ones_like(grad, dtype=torch.float32)",
        "fused-vs-formula",
    ),
    Mutant(
        "sech-squared-typo",
        "sech² is written 1 − tanh instead of 1 − tanh² in the gate's derivative",
        f"{_FN}.backward",
        "df = (1 - tg * tg) * sg",
        "df = (1 - tg) * sg",
        "fused-vs-formula",
    ),
    Mutant(
        "sigmoid-of-scaled-gate",
        "the forward takes σ(g/β) instead of σ(g)",
        f"{_FN}.forward",
        "torch.sigmoid(g) * (beta_linear * tu)",
        "torch.sigmoid(g / beta) * (beta_linear * tu)",
        "fused-vs-formula",
    ),
    Mutant(
        "compute-in-input-dtype",
        "the forward computes in the input dtype (bfloat16) instead of float32",
        f"{_FN}.forward",
        "g, u = x.float().chunk(2, dim=-1)",
        "g, u = x.chunk(2, dim=-1)",
        "bf16-fp32-compute",
        kind="low-precision",
    ),
)
