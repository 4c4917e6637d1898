"""Declared verification of Stable LatentMoE.

Compared: grouped latent SiTU experts against the loop reference, outputs and
gradients. Properties: K3's latent width is half the hidden width (7168 → 3584, 896
experts, top-16, 2 shared); dispatch moves T·k·ℓ elements; the RMSNorm after the sum
makes the layer blind to the scale of the routed experts' outputs.
"""

from __future__ import annotations

import dataclasses

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    against,
    compare,
    compare_forms,
    count,
    worst,
)
from kernels.experts import Experts
from kernels.stable_latentmoe.grouped import stable_latentmoe
from kernels.stable_latentmoe.layer import K3, StableConfig, init_stable
from kernels.stable_latentmoe.naive import naive_stable_latentmoe

SMALL = StableConfig(hidden=32, latent=16, experts=12, k=4, shared=2)
T = 37
NAMES = ("router", "down", "norm", "up", "w1", "w3", "w2", "shared w1", "shared w3", "shared w2")


def grouped_matches_loop(s: Setting) -> Outcome:
    layer = init_stable(SMALL, s.generator(0), s.device, s.dtype)
    x = s.randn(T, SMALL.hidden, gen=s.generator(1))
    return compare_forms(
        lambda x, *w: naive_stable_latentmoe(x, layer.with_tensors(*w)),
        lambda x, *w: stable_latentmoe(x, layer.with_tensors(*w))[0],
        (x, *layer.tensors()),
        (s.randn(T, SMALL.hidden, gen=s.generator(2)),),
        grads=("x", *NAMES),
    )


def k3_dimensions(s: Setting) -> Outcome:
    layer = init_stable(SMALL, s.generator(3), s.device, s.dtype)
    _, moved = stable_latentmoe(s.randn(T, SMALL.hidden, gen=s.generator(4)), layer)
    return worst(
        [
            against(K3.latent / K3.hidden, 0.5, f"K3 latent {K3.latent} / hidden {K3.hidden}"),
            count(moved, T * SMALL.k * SMALL.latent, f"dispatched {moved} = T·k·l elements"),
            against(moved / (T * SMALL.k * SMALL.hidden), SMALL.latent / SMALL.hidden),
        ],
        f"K3: {K3.hidden} → {K3.latent}, {K3.experts} experts, top-{K3.k}, {K3.shared} shared; "
        f"dispatch is l/d = 0.5 of full width",
    )


def rmsnorm_fixes_scale(s: Setting) -> Outcome:
    layer = init_stable(SMALL, s.generator(5), s.device, s.dtype)
    x = s.randn(T, SMALL.hidden, gen=s.generator(6))
    e = layer.experts
    louder = dataclasses.replace(layer, experts=Experts(e.w1, e.w3, e.w2 * 7.5))
    return compare(
        stable_latentmoe(x, layer)[0],
        stable_latentmoe(x, louder)[0],
        "layer output when every routed expert's output is scaled by 7.5",
    )


VERIFICATION = Verification(
    technique="stable-latentmoe",
    compares="grouped latent SiTU-GLU experts with RMSNorm after the weighted sum and two "
    "shared experts "
    "against the loop reference: outputs and gradients of every weight",
    shapes=(f"T{T}-d{SMALL.hidden}-l{SMALL.latent}-E{SMALL.experts}-k{SMALL.k}-shared{SMALL.shared}",),
    gradients=True,
    checks=(
        Check(
            "grouped-vs-loop",
            "Grouped experts equal the loop reference, outputs and gradients.",
            grouped_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "latent-is-half",
            "The latent is half the hidden width (K3: 7168 → 3584) and dispatch moves T·k·l elements.",
            k3_dimensions,
            tolerance=1e-12,
            measure="abs",
        ),
        Check(
            "rmsnorm-after-sum",
            "RMSNorm after the weighted sum makes the output independent of the "
            "routed experts' output scale (up to the norm's epsilon, 1e-6).",
            rmsnorm_fixes_scale,
            tolerance=1e-3,
        ),
    ),
)
