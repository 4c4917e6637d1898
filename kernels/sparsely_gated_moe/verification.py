"""Declared verification of noisy top-k gating.

Compared: batched noisy top-k gating feeding the fused MoE pipeline against a per-token
loop, outputs and gradients of x, both gate matrices and the experts (for one fixed
draw of the noise). Properties: every gate row has exactly k non-zero entries summing
to 1; with zero noise weights it is softmax over the top-k logits.
"""

from __future__ import annotations

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare,
    compare_forms,
    count,
    worst,
)
from kernels.experts import Experts, init_experts
from kernels.sparsely_gated_moe.gating import noisy_topk_gates, noisy_topk_moe
from kernels.sparsely_gated_moe.naive import naive_noisy_topk_moe

T, D, E, K = 45, 16, 6, 2


def _setup(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    x = s.randn(T, D, gen=gen)
    w_gate, w_noise = s.randn(E, D, gen=gen, scale=0.5), s.randn(E, D, gen=gen, scale=0.5)
    noise = s.randn(T, E, gen=gen)
    return x, w_gate, w_noise, noise, init_experts(E, D, 2 * D, gen, s.device, s.dtype)


def batched_matches_loop(s: Setting) -> Outcome:
    x, w_gate, w_noise, noise, experts = _setup(s, 0)
    return compare_forms(
        lambda x, wg, wn, *e: naive_noisy_topk_moe(x, wg, wn, noise, Experts(*e), K)[0],
        lambda x, wg, wn, *e: noisy_topk_moe(x, wg, wn, noise, Experts(*e), K)[0],
        (x, w_gate, w_noise, *experts.tensors()),
        (s.randn(T, D, gen=s.generator(1)),),
        grads=("x", "w_gate", "w_noise", "w1", "w3", "w2"),
    )


def gates_are_sparse(s: Setting) -> Outcome:
    x, w_gate, w_noise, noise, _ = _setup(s, 2)
    gates, _ = noisy_topk_gates(x, w_gate, w_noise, noise, K)
    nonzero = (gates > 0).sum(-1)
    plain, _ = noisy_topk_gates(x, w_gate, w_noise, torch.zeros_like(noise), K)
    logits = x @ w_gate.T
    top = logits.topk(K, dim=-1)
    expected = torch.zeros_like(logits).scatter(1, top.indices, top.values.softmax(-1))
    return worst(
        [
            count(int((nonzero != K).sum()), 0, "rows without exactly k non-zero gates"),
            compare(torch.ones(T), gates.sum(-1).cpu(), "gate row sums"),
            compare(expected, plain, "no noise vs softmax over the top-k logits"),
        ],
        f"every row has exactly {K} non-zero gates summing to 1; no noise is plain top-k softmax",
    )


VERIFICATION = Verification(
    technique="sparsely-gated-moe",
    compares="batched noisy top-k gating with the fused MoE pipeline against a per-token loop "
    "(fixed noise "
    "draw): outputs and gradients of x, gate and noise weights, experts",
    shapes=(f"T{T}-d{D}-E{E}-k{K}",),
    gradients=True,
    checks=(
        Check(
            "batched-vs-loop",
            "Batched noisy top-k gating and the fused experts equal the token loop, outputs and gradients.",
            batched_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "sparse-gates",
            "Each token's gates have exactly k non-zero entries summing to 1; without "
            "noise they are the softmax over the top-k logits.",
            gates_are_sparse,
            tolerance=1e-6,
        ),
    ),
)
