"""Declared verification of the fused MoE pipeline (permute → grouped GEMM → unpermute
and weighted sum) against a token loop, outputs and gradients; the per-expert counts
sum to T·k."""

from __future__ import annotations

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare_forms,
    count,
    worst,
)
from kernels.experts import Experts, init_experts
from kernels.hpc_ops.fused import fused_moe
from kernels.hpc_ops.naive import naive_moe

CASES = ((45, 16, 6, 2), (37, 12, 8, 3))  # tokens, d, experts, k


def _setup(s: Setting, T: int, d: int, E: int, k: int, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    x = s.randn(T, d, gen=gen)
    logits = s.randn(T, E, gen=gen)
    top = logits.softmax(-1).topk(k, dim=-1)
    return x, top.indices, top.values, init_experts(E, d, 2 * d, gen, s.device, s.dtype)


def fused_matches_loop(s: Setting) -> Outcome:
    results = []
    for i, (T, d, E, k) in enumerate(CASES):
        x, chosen, weights, experts = _setup(s, T, d, E, k, i)
        results.append(
            compare_forms(
                lambda x, w, *e, c=chosen: naive_moe(x, c, w, Experts(*e)),
                lambda x, w, *e, c=chosen: fused_moe(x, c, w, Experts(*e))[0],
                (x, weights, *experts.tensors()),
                (s.randn(T, d, gen=s.generator(10 + i)),),
                grads=("x", "weights", "w1", "w3", "w2"),
                tag=f"T{T}-E{E}-k{k}",
            )
        )
    return worst(results)


def counts_sum_to_tk(s: Setting) -> Outcome:
    results = []
    for i, (T, d, E, k) in enumerate(CASES):
        x, chosen, weights, experts = _setup(s, T, d, E, k, 20 + i)
        _, counts = fused_moe(x, chosen, weights, experts)
        per_expert = torch.bincount(chosen.flatten(), minlength=E).tolist()
        results.append(count(sum(counts), T * k, f"T{T}-k{k}: counts {counts} sum to {sum(counts)}"))
        results.append(count(int(counts != per_expert), 0, "counts equal the routing histogram"))
    return worst(results)


VERIFICATION = Verification(
    technique="hpc-ops",
    compares="permute → grouped GEMM → unpermute with weighted sum against a per-token, per-expert "
    "loop: outputs and gradients of x, routing weights and expert weights",
    shapes=tuple(f"T{T}-d{d}-E{E}-k{k}" for T, d, E, k in CASES),
    gradients=True,
    checks=(
        Check(
            "fused-vs-loop",
            "The permute/grouped-GEMM/unpermute pipeline equals the token loop, outputs and gradients.",
            fused_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "counts",
            "Per-expert counts sum to T·k and equal the routing histogram.",
            counts_sum_to_tk,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
