"""GRPO on whole batches: rewards reshaped to [groups, G] for the advantages, and the
clipped token loss as masked tensor algebra."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["grpo_advantages", "grpo_loss"]


def grpo_advantages(rewards: torch.Tensor, group: int) -> torch.Tensor:
    r = rewards.view(-1, group)
    return ((r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True) + 1e-4)).flatten()


def grpo_loss(
    logp: Tensor, logp_old: Tensor, advantages: Tensor, mask: Tensor, *, eps: float = 0.2, eps_high: float = 0.2,
    beta: float = 0.0, logp_ref: Tensor | None = None,
) -> Tensor:
    ratio = torch.exp(logp - logp_old)
    a = advantages[:, None]
    per_token = -torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps_high) * a)
    if beta and logp_ref is not None:
        diff = logp_ref - logp
        per_token = per_token + beta * (torch.exp(diff) - diff - 1)
    m = mask.to(per_token.dtype)
    return (per_token * m).sum() / m.sum().clamp(min=1)
