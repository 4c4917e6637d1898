"""Bugs a person makes in noisy top-k gating."""

from __future__ import annotations

from kernels.mutation import Mutant

_GATES = "kernels.sparsely_gated_moe.gating:noisy_topk_gates"

MUTANTS = (
    Mutant(
        "noise-without-softplus",
        "the noise is scaled by the raw noise logits instead of their softplus",
        _GATES,
        "noise * F.softplus(x @ w_noise.T)",
        "noise * (x @ w_noise.T)",
        "batched-vs-loop",
    ),
    Mutant(
        "softmax-before-topk",
        "the softmax is taken over all experts before the top-k, so the kept gates do not sum to 1",
        _GATES,
        "kept = torch.full_like(h, float(\"-inf\")).scatter(1, chosen, h.gather(1, chosen))\n"
        "    return kept.softmax(-1), chosen",
        "p = h.softmax(-1)\n"
        "    return torch.zeros_like(h).scatter(1, chosen, p.gather(1, chosen)), chosen",
        "sparse-gates",
    ),
    Mutant(
        "topk-of-clean-logits",
        "the experts are chosen on the clean logits, and the noise only enters the weights",
        _GATES,
        "chosen = torch.sort(h, dim=-1",
        "chosen = torch.sort(x @ w_gate.T, dim=-1",
        "batched-vs-loop",
    ),
    Mutant(
        "gates-in-expert-order",
        "the gates passed to the experts are the first k columns, not those of the chosen experts",
        "kernels.sparsely_gated_moe.gating:noisy_topk_moe",
        "gates.gather(1, chosen)",
        "gates[:, : chosen.shape[1]]",
        "batched-vs-loop",
    ),
)
