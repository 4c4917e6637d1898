"""Declared verification of the fused MoE pipeline (permute → grouped GEMM → unpermute
and weighted sum) against a token loop, outputs and gradients, also when the last
experts get no token; the per-expert counts, every expert included, equal the routing
histogram counted here and sum to T·k."""

from __future__ import annotations

import torch

from kernels.check_inputs import top_k_routing
from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.experts import Experts, init_experts
from kernels.families import BATCH_OF_ONE, IDLE_EXPERTS
from kernels.hpc_ops.fused import fused_moe
from kernels.hpc_ops.naive import naive_moe
from kernels.measures import Outcome, Setting, compare, count, worst

#: tokens T, width d, experts E, experts per token k
CASES = (
    case(T=45, d=16, E=6, k=2),
    case(T=37, d=12, E=8, k=3),
    case(IDLE_EXPERTS, T=29, d=8, E=7, k=2),
    case(BATCH_OF_ONE, T=1, d=8, E=4, k=2),
)


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    x = s.randn(c.T, c.d, gen=gen)
    chosen, weights = top_k_routing(s, c, gen)
    return Drawn((x, weights, *init_experts(c.E, c.d, 2 * c.d, gen, s.device, s.dtype).tensors()), context=chosen)


FUSED = comparison(
    "fused-vs-loop",
    "The permute/grouped-GEMM/unpermute pipeline equals the token loop, outputs and gradients.",
    lambda chosen, x, w, *e: naive_moe(x, chosen, w, Experts(*e)),
    lambda chosen, x, w, *e: fused_moe(x, chosen, w, Experts(*e))[0],
    _draw,
    CASES,
    grads=("x", "weights", "w1", "w3", "w2"),
)


@check("counts", 0.0, measure="abs", covers=(IDLE_EXPERTS, BATCH_OF_ONE))
def counts_are_the_histogram(s: Setting) -> Outcome:
    """Per-expert counts, one for every expert (idle ones 0), equal the routing histogram
    counted token by token and sum to T·k."""
    results = []
    for i, c in enumerate(CASES):
        x, weights, *w = _draw(s, c, s.generator(20 + i)).inputs
        chosen = _draw(s, c, s.generator(20 + i)).context
        _, counts = fused_moe(x, chosen, weights, Experts(*w))
        routed = [sum(int(e) == expert for row in chosen.tolist() for e in row) for expert in range(c.E)]
        results.append(compare(torch.tensor(routed), torch.tensor(counts), f"{c.id}: counts {counts}"))
        results.append(count(sum(counts), c.T * c.k, f"{c.id}: counts sum to {sum(counts)}, T·k = {c.T * c.k}"))
    return worst(results, "counts equal the routing histogram and sum to T·k")


VERIFICATION = Verification("hpc-ops", __doc__ or "", (FUSED, counts_are_the_histogram))
