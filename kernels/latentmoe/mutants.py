"""Bugs a person makes in LatentMoE's grouped form."""

from __future__ import annotations

from kernels.mutation import Mutant

_MOE = "kernels.latentmoe.grouped:latent_moe"

MUTANTS = (
    Mutant(
        "project-after-dispatch",
        "the full hidden states are dispatched and projected to the latent on the expert side: "
        "the same output, d-wide traffic",
        _MOE,
        "payload = z[perm.tokens]  # what crosses the expert-parallel fabric\n"
        "    y = grouped_apply(payload, perm.counts, layer.experts)",
        "payload = x[perm.tokens]  # what crosses the expert-parallel fabric\n"
        "    y = grouped_apply(payload @ layer.down.T, perm.counts, layer.experts)",
        "dispatch-is-latent",
    ),
    Mutant(
        "unweighted-combine",
        "the latent expert outputs are combined without their routing weights",
        _MOE,
        "unpermute(y, perm, weights, x.shape[0])",
        "unpermute(y, perm, torch.ones_like(weights), x.shape[0])",
        "grouped-vs-loop",
    ),
    Mutant(
        "shared-expert-dropped",
        "the full-width shared expert is left out of the output",
        _MOE,
        "return routed + apply_expert(x, layer.shared, 0), payload.numel()",
        "return routed, payload.numel()",
        "grouped-vs-loop",
    ),
    Mutant(
        "up-projection-transposed",
        "the up-projection is applied as down.T instead of up.T (both are ℓ×d-shaped maps back)",
        _MOE,
        "@ layer.up.T",
        "@ layer.down",
        "grouped-vs-loop",
    ),
    Mutant(
        "route-weights-not-renormalised",
        "the shared router returns the raw sigmoid scores of the chosen experts instead of "
        "renormalising them to sum to 1",
        "kernels.latentmoe.layer:route",
        "return chosen, weights / weights.sum(-1, keepdim=True)",
        "return chosen, weights",
        "grouped-vs-loop",
        kind="independent-reference",
    ),
)
