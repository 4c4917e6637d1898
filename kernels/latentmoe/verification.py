"""Declared verification of LatentMoE: grouped latent experts against a token loop
(outputs and gradients of every weight), and dispatch traffic of T·k·ℓ elements,
ℓ/d of a full-width MoE's."""

from __future__ import annotations

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    against,
    compare_forms,
    count,
    worst,
)
from kernels.latentmoe.grouped import latent_moe
from kernels.latentmoe.layer import LatentMoE, init_latentmoe
from kernels.latentmoe.naive import naive_latentmoe

CASES = ((45, 32, 8, 6, 2), (30, 48, 12, 8, 3))  # tokens, d, ℓ, experts, k
NAMES = ("router", "down", "up", "w1", "w3", "w2", "shared w1", "shared w3", "shared w2")


def grouped_matches_loop(s: Setting) -> Outcome:
    results = []
    for i, (T, d, lat, E, k) in enumerate(CASES):
        layer = init_latentmoe(d, lat, E, k, s.generator(i), s.device, s.dtype)
        x = s.randn(T, d, gen=s.generator(10 + i))
        results.append(
            compare_forms(
                lambda x, *w, k=k: naive_latentmoe(x, LatentMoE.from_tensors(k, *w)),
                lambda x, *w, k=k: latent_moe(x, LatentMoE.from_tensors(k, *w))[0],
                (x, *layer.tensors()),
                (s.randn(T, d, gen=s.generator(20 + i)),),
                grads=("x", *NAMES),
                tag=f"T{T}-d{d}-l{lat}-E{E}-k{k}",
            )
        )
    return worst(results)


def dispatch_scales_with_latent(s: Setting) -> Outcome:
    results = []
    for i, (T, d, lat, E, k) in enumerate(CASES):
        layer = init_latentmoe(d, lat, E, k, s.generator(30 + i), s.device, s.dtype)
        _, moved = latent_moe(s.randn(T, d, gen=s.generator(40 + i)), layer)
        results.append(count(moved, T * k * lat, f"T{T}-k{k}-l{lat}: dispatched {moved} elements"))
        results.append(
            against(
                moved / (T * k * d),
                lat / d,
                f"dispatch ratio to a full-width MoE {moved / (T * k * d):.4g} = l/d",
            )
        )
    return worst(results)


VERIFICATION = Verification(
    technique="latentmoe",
    compares="gate on the hidden state → latent down-projection → grouped experts → "
    "up-projection, plus "
    "a full-width shared expert, against a per-token loop: outputs and gradients",
    shapes=tuple(f"T{T}-d{d}-l{lat}-E{E}-k{k}" for T, d, lat, E, k in CASES),
    gradients=True,
    checks=(
        Check(
            "grouped-vs-loop",
            "Grouped latent experts equal the token loop, outputs and gradients of every weight.",
            grouped_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "dispatch-is-latent",
            "Dispatch moves T·k·l elements: l/d of a full-width MoE.",
            dispatch_scales_with_latent,
            tolerance=1e-12,
            measure="abs",
        ),
    ),
)
