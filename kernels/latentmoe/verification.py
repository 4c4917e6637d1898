"""Declared verification of LatentMoE: grouped latent experts against a token loop
(outputs and gradients of every weight), also with idle experts; and dispatch traffic
of T·k·ℓ elements, ℓ/d of a full-width MoE's (worked out here from the shapes)."""

from __future__ import annotations

import torch

from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.families import BATCH_OF_ONE, IDLE_EXPERTS, skewed_router
from kernels.latentmoe.grouped import latent_moe
from kernels.latentmoe.layer import LatentMoE, init_latentmoe
from kernels.latentmoe.naive import naive_latentmoe
from kernels.measures import Outcome, Setting, against, count, worst

#: tokens T, hidden d, latent l, experts E, experts per token k
CASES = (
    case(T=45, d=32, l=8, E=6, k=2),
    case(T=30, d=48, l=12, E=8, k=3),
    case(IDLE_EXPERTS, T=23, d=16, l=8, E=6, k=2),
    case(BATCH_OF_ONE, T=1, d=16, l=8, E=4, k=2),
)
NAMES = ("router", "down", "up", "w1", "w3", "w2", "shared w1", "shared w3", "shared w2")


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    layer = init_latentmoe(c.d, c.l, c.E, c.k, gen, s.device, s.dtype)
    x, router = s.randn(c.T, c.d, gen=gen), layer.router
    if IDLE_EXPERTS in c.families:
        x, router = skewed_router(x, router)
    return Drawn((x, router, *layer.tensors()[1:]), context=c.k)


GROUPED = comparison(
    "grouped-vs-loop",
    "Grouped latent experts equal the token loop, outputs and gradients of every weight.",
    lambda k, x, *w: naive_latentmoe(x, LatentMoE.from_tensors(k, *w)),
    lambda k, x, *w: latent_moe(x, LatentMoE.from_tensors(k, *w))[0],
    _draw,
    CASES,
    grads=("x", *NAMES),
)


@check("dispatch-is-latent", 1e-12, measure="abs", covers=(BATCH_OF_ONE,))
def dispatch_scales_with_latent(s: Setting) -> Outcome:
    """Dispatch moves T·k·l elements: l/d of a full-width MoE."""
    results = []
    for i, c in enumerate(CASES):
        x, *w = _draw(s, c, s.generator(30 + i)).inputs
        _, moved = latent_moe(x, LatentMoE.from_tensors(c.k, *w))
        results.append(count(moved, c.T * c.k * c.l, f"{c.id}: dispatched {moved} elements"))
        ratio = moved / (c.T * c.k * c.d)
        results.append(against(ratio, c.l / c.d, f"dispatch ratio to a full-width MoE {ratio:.4g} = l/d"))
    return worst(results)


VERIFICATION = Verification("latentmoe", __doc__ or "", (GROUPED, dispatch_scales_with_latent))
