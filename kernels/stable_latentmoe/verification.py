"""Declared verification of Stable LatentMoE.

Compared: grouped latent SiTU experts against the loop reference, outputs and
gradients, also when the routed experts' outputs are tiny (where the RMSNorm's epsilon
matters) and when a bias keeps the last experts idle. Properties: K3's latent width is
half the hidden width (7168 → 3584, 896 experts, top-16, 2 shared); dispatch moves
T·k·ℓ elements; the RMSNorm after the sum makes the layer blind to the scale of the
routed experts' outputs.
"""

from __future__ import annotations

import dataclasses

import torch

from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.experts import Experts
from kernels.families import BATCH_OF_ONE, FAR_FROM_UNIT, IDLE_EXPERTS, TINY
from kernels.measures import Outcome, Setting, against, compare, count, worst
from kernels.stable_latentmoe.grouped import stable_latentmoe
from kernels.stable_latentmoe.layer import K3, StableConfig, StableLatentMoE, init_stable
from kernels.stable_latentmoe.naive import naive_stable_latentmoe

#: tokens T, hidden d, latent l, experts E, experts per token k (two shared experts)
CASES = (
    case(T=37, d=32, l=16, E=12, k=4),
    case(FAR_FROM_UNIT, T=19, d=16, l=8, E=6, k=2),
    case(IDLE_EXPERTS, BATCH_OF_ONE, T=1, d=16, l=8, E=6, k=2),
    case(IDLE_EXPERTS, T=23, d=16, l=8, E=6, k=2),
)
NAMES = ("router", "down", "norm", "up", "w1", "w3", "w2", "shared w1", "shared w3", "shared w2")


def _layer(s: Setting, c: Case, gen: torch.Generator) -> StableLatentMoE:
    layer = init_stable(StableConfig(c.d, c.l, c.E, c.k), gen, s.device, s.dtype)
    if FAR_FROM_UNIT in c.families:  # routed outputs of order 1e-4: RMSNorm's epsilon is not negligible
        e = layer.experts
        layer = dataclasses.replace(layer, experts=Experts(e.w1, e.w3, e.w2 * TINY))
    if IDLE_EXPERTS in c.families:  # the last two experts are never chosen, expert 0 always
        bias = layer.bias.clone()
        bias[0], bias[-2:] = 10.0, -10.0
        layer = dataclasses.replace(layer, bias=bias)
    return layer


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    layer = _layer(s, c, gen)
    return Drawn((s.randn(c.T, c.d, gen=gen), *layer.tensors()), context=layer)


GROUPED = comparison(
    "grouped-vs-loop",
    "Grouped experts equal the loop reference, outputs and gradients.",
    lambda layer, x, *w: naive_stable_latentmoe(x, layer.with_tensors(*w)),
    lambda layer, x, *w: stable_latentmoe(x, layer.with_tensors(*w))[0],
    _draw,
    CASES,
    grads=("x", *NAMES),
)


@check("latent-is-half", 1e-12, measure="abs")
def k3_dimensions(s: Setting) -> Outcome:
    """The latent is half the hidden width (K3: 7168 → 3584) and dispatch moves T·k·l elements."""
    c = CASES[0]
    x, *w = _draw(s, c, s.generator(3)).inputs
    _, moved = stable_latentmoe(x, _layer(s, c, s.generator(3)).with_tensors(*w))
    return worst(
        [
            against(K3.latent / K3.hidden, 0.5, f"K3 latent {K3.latent} / hidden {K3.hidden}"),
            count(moved, c.T * c.k * c.l, f"dispatched {moved} = T·k·l elements"),
            against(moved / (c.T * c.k * c.d), c.l / c.d),
        ],
        f"K3: {K3.hidden} → {K3.latent}, {K3.experts} experts, top-{K3.k}, {K3.shared} shared; "
        f"dispatch is l/d = 0.5 of full width",
    )


@check("rmsnorm-after-sum", 1e-3)
def rmsnorm_fixes_scale(s: Setting) -> Outcome:
    """RMSNorm after the weighted sum makes the output independent of the routed experts'
    output scale (up to the norm's epsilon, 1e-6)."""
    c = CASES[0]
    layer = _layer(s, c, s.generator(5))
    x = s.randn(c.T, c.d, gen=s.generator(6))
    e = layer.experts
    louder = dataclasses.replace(layer, experts=Experts(e.w1, e.w3, e.w2 * 7.5))
    return compare(
        stable_latentmoe(x, layer)[0],
        stable_latentmoe(x, louder)[0],
        "layer output when every routed expert's output is scaled by 7.5",
    )


VERIFICATION = Verification("stable-latentmoe", __doc__ or "", (GROUPED, k3_dimensions, rmsnorm_fixes_scale))
