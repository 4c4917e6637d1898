"""Bugs a person makes in Stable LatentMoE's grouped form."""

from __future__ import annotations

from kernels.mutation import Mutant

_MOE = "kernels.stable_latentmoe.grouped:stable_latentmoe"

MUTANTS = (
    Mutant(
        "norm-skipped",
        "the RMSNorm after the weighted sum is left out",
        _MOE,
        "out = rms_norm(routed, layer.norm) @ layer.up.T",
        "out = routed @ layer.up.T",
        "rmsnorm-after-sum",
    ),
    Mutant(
        "norm-per-expert",
        "each expert's output is normalised before the weighted sum as well",
        _MOE,
        "grouped_apply(payload, perm.counts, layer.experts, situ_act)",
        "rms_norm(grouped_apply(payload, perm.counts, layer.experts, situ_act), layer.norm)",
        "grouped-vs-loop",
    ),
    Mutant(
        "one-shared-expert",
        "only the first of the two shared experts is added",
        _MOE,
        "for e in range(layer.shared.count)",
        "for e in range(1)",
        "grouped-vs-loop",
    ),
    Mutant(
        "project-after-dispatch",
        "the hidden states are dispatched at full width and projected on the expert side",
        _MOE,
        "payload = z[perm.tokens]\n    routed = unpermute(\n        grouped_apply(payload, ",
        "payload = x[perm.tokens]\n    routed = unpermute(\n        grouped_apply(payload @ layer.down.T, ",
        "latent-is-half",
    ),
    Mutant(
        "rmsnorm-epsilon-outside-root",
        "the shared RMSNorm adds its epsilon after the square root: invisible at unit scale, "
        "wrong when the routed sum is of order 1e-4",
        "kernels.stable_latentmoe.layer:rms_norm",
        "torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)",
        "1 / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps)",
        "grouped-vs-loop",
        kind="adversarial-input",
    ),
    Mutant(
        "situ-halves-swapped",
        "the shared SiTU activation concatenates [up, gate] instead of [gate, up], so the "
        "bounded linear branch gates and the sigmoid branch carries the value",
        "kernels.stable_latentmoe.layer:situ_act",
        "torch.cat([gate, up], dim=-1)",
        "torch.cat([up, gate], dim=-1)",
        "grouped-vs-loop",
        kind="independent-reference",
    ),
    Mutant(
        "bias-in-the-weights",
        "the shared router renormalises the biased scores, so the selection bias leaks into the weights",
        "kernels.stable_latentmoe.layer:route",
        "picked = scores.gather(1, chosen)",
        "picked = (scores + layer.bias).gather(1, chosen)",
        "grouped-vs-loop",
        kind="independent-reference",
    ),
)
