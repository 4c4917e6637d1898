"""Declared verification of noisy top-k gating.

Compared: batched noisy top-k gating feeding the fused MoE pipeline against a per-token
loop, outputs and gradients of x, both gate matrices and the experts (for one fixed
draw of the noise), also when the gate leaves the last experts idle. Properties: every
gate row has exactly k non-zero entries summing to 1; with zero noise it is the softmax
over the top-k logits.
"""

from __future__ import annotations

import torch

from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.experts import Experts, init_experts
from kernels.families import BATCH_OF_ONE, IDLE_EXPERTS, skewed_router
from kernels.measures import Outcome, Setting, compare, count, worst
from kernels.sparsely_gated_moe.gating import noisy_topk_gates, noisy_topk_moe
from kernels.sparsely_gated_moe.naive import naive_noisy_topk_moe

CASES = (
    case(T=45, d=16, E=6, k=2),
    case(IDLE_EXPERTS, T=31, d=12, E=7, k=3),
    case(BATCH_OF_ONE, T=1, d=8, E=4, k=2),
)


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    x = s.randn(c.T, c.d, gen=gen)
    w_gate, w_noise = s.randn(c.E, c.d, gen=gen, scale=0.5), s.randn(c.E, c.d, gen=gen, scale=0.5)
    noise = s.randn(c.T, c.E, gen=gen)
    if IDLE_EXPERTS in c.families:
        x, w_gate = skewed_router(x, w_gate)
        w_noise[:, 0] = 0.0
    experts = init_experts(c.E, c.d, 2 * c.d, gen, s.device, s.dtype)
    return Drawn((x, w_gate, w_noise, *experts.tensors()), context=(noise, c.k))


BATCHED = comparison(
    "batched-vs-loop",
    "Batched noisy top-k gating and the fused experts equal the token loop, outputs and gradients.",
    lambda ctx, x, wg, wn, *e: naive_noisy_topk_moe(x, wg, wn, ctx[0], Experts(*e), ctx[1])[0],
    lambda ctx, x, wg, wn, *e: noisy_topk_moe(x, wg, wn, ctx[0], Experts(*e), ctx[1])[0],
    _draw,
    CASES,
    grads=("x", "w_gate", "w_noise", "w1", "w3", "w2"),
)


@check("sparse-gates", 1e-6, covers=(IDLE_EXPERTS,))
def gates_are_sparse(s: Setting) -> Outcome:
    """Each token's gates have exactly k non-zero entries summing to 1; without noise
    they are the softmax over the top-k logits."""
    results = []
    for i, c in enumerate(CASES):
        x, w_gate, w_noise, *_ = _draw(s, c, s.generator(10 + i)).inputs
        noise = s.randn(c.T, c.E, gen=s.generator(20 + i))
        gates, _ = noisy_topk_gates(x, w_gate, w_noise, noise, c.k)
        plain, _ = noisy_topk_gates(x, w_gate, w_noise, torch.zeros_like(noise), c.k)
        top = (x @ w_gate.T).topk(c.k, dim=-1)
        expected = torch.zeros_like(plain).scatter(1, top.indices, top.values.softmax(-1))
        results += [
            count(int(((gates > 0).sum(-1) != c.k).sum()), 0, f"{c.id}: rows without exactly k non-zero gates"),
            compare(torch.ones(c.T), gates.sum(-1).cpu(), f"{c.id}: gate row sums"),
            compare(expected, plain, f"{c.id}: no noise vs softmax over the top-k logits"),
        ]
    return worst(results, "every row has exactly k non-zero gates summing to 1; no noise is plain top-k softmax")


VERIFICATION = Verification("sparsely-gated-moe", __doc__ or "", (BATCHED, gates_are_sparse))
