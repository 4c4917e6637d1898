"""Bugs a person makes in auxiliary-loss-free balancing."""

from __future__ import annotations

from kernels.mutation import Mutant

_ROUTE = "kernels.aux_loss_free.balance:route"

MUTANTS = (
    Mutant(
        "weights-from-biased-scores",
        "the routing weights are taken from the biased scores, so the bias leaks into the output",
        _ROUTE,
        "picked = s.gather(1, chosen)",
        "picked = (s + bias).gather(1, chosen)",
        "unbiased-weights",
    ),
    Mutant(
        "bias-update-sign-flipped",
        "the bias moves towards the overloaded experts instead of away from them",
        "kernels.aux_loss_free.balance:bias_update",
        "torch.sign(counts.float().mean() - counts.float())",
        "torch.sign(counts.float() - counts.float().mean())",
        "balance",
    ),
    Mutant(
        "choice-ignores-bias",
        "the experts are chosen on the unbiased scores, so the bias has no effect",
        _ROUTE,
        "torch.sort(s + bias, dim=-1",
        "torch.sort(s, dim=-1",
        "batched-vs-loop",
    ),
    Mutant(
        "missing-route-scale",
        "the renormalised weights are not multiplied by route_scale",
        _ROUTE,
        "picked / picked.sum(-1, keepdim=True) * route_scale",
        "picked / picked.sum(-1, keepdim=True)",
        "batched-vs-loop",
    ),
    Mutant(
        "imbalance-over-busy-experts",
        "the imbalance averages over the experts that received tokens only, so idle experts make "
        "the load look balanced",
        "kernels.aux_loss_free.balance:load_imbalance",
        "c = counts.float()",
        "c = counts[counts > 0].float()",
        "update-and-imbalance",
        kind="expected-value",
    ),
    Mutant(
        "update-not-centred",
        "the bias update is not centred: Δb keeps its mean, so the biases drift together",
        "kernels.aux_loss_free.balance:bias_update",
        "return bias + (delta - delta.mean())",
        "return bias + delta",
        "update-and-imbalance",
    ),
)
