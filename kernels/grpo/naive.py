"""GRPO, the obvious way: group by group, sequence by sequence, token by token.

Advantage of completion i in its group of G: A_i = (r_i − mean(r)) / (std(r) + 1e-4),
with Bessel's correction. Per token, with ratio ρ = exp(logp − logp_old):
    loss = −min(ρ·A, clip(ρ, 1 − ε, 1 + ε_high)·A)
plus β·(e^{ref − logp} − (ref − logp) − 1) when a reference is given; the loss is
averaged over all completion tokens of the batch (TRL's "dapo" normalisation).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["naive_advantages", "naive_grpo_loss"]


def naive_advantages(rewards: list[float], group: int) -> list[float]:
    out = []
    for g in range(0, len(rewards), group):
        r = rewards[g : g + group]
        mean = sum(r) / len(r)
        std = math.sqrt(sum((x - mean) ** 2 for x in r) / (len(r) - 1))
        out += [(x - mean) / (std + 1e-4) for x in r]
    return out


def naive_grpo_loss(
    logp: Tensor, logp_old: Tensor, advantages: list[float], mask: Tensor, *, eps: float = 0.2,
    eps_high: float = 0.2, beta: float = 0.0, logp_ref: Tensor | None = None,
) -> Tensor:
    """logp, logp_old, mask: [N, L] (N completions of up to L tokens)."""
    total = logp.new_zeros(())
    tokens = 0
    for i in range(logp.shape[0]):
        for t in range(logp.shape[1]):
            if not mask[i, t]:
                continue
            ratio = torch.exp(logp[i, t] - logp_old[i, t])
            a = advantages[i]
            term = -torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps_high) * a)
            if beta and logp_ref is not None:
                diff = logp_ref[i, t] - logp[i, t]
                term = term + beta * (torch.exp(diff) - diff - 1)
            total = total + term
            tokens += 1
    return total / max(tokens, 1)
