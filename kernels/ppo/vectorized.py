"""PPO's advantage estimate without a loop over time.

GAE is a discounted sum of TD residuals that stops at episode ends:
A_t = Σ_{u ≥ t} (γλ)^{u−t} · [no episode ends in t … u−1] · δ_u, a triangular matrix
product. With D_u the number of episode ends before u, the bracket is D_u = D_t; the
power (γλ)^{u−t} has γλ ≤ 1, so it never overflows.
"""

from __future__ import annotations

import torch

__all__ = ["clipped_loss", "gae"]


def gae(
    rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, gamma: float, lam: float
) -> torch.Tensor:
    """Same contract as ``naive_gae``."""
    keep = 1.0 - dones
    delta = rewards + gamma * values[1:] * keep - values[:-1]
    T = rewards.shape[0]
    t = torch.arange(T, device=rewards.device)
    ends = torch.cat([dones.new_zeros(1), dones.cumsum(0)[:-1]])  # D_u: episode ends before u
    same_episode = ends[None, :] == ends[:, None]
    later = t[None, :] >= t[:, None]
    span = (t[None, :] - t[:, None]).clamp(min=0).to(rewards.dtype)
    weights = torch.where(
        same_episode & later, torch.full_like(span, gamma * lam).pow(span), torch.zeros_like(span)
    )
    return weights @ delta


def clipped_loss(
    logp: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor, eps: float = 0.2
) -> torch.Tensor:
    ratio = torch.exp(logp - logp_old)
    return -torch.minimum(ratio * adv, ratio.clamp(1 - eps, 1 + eps) * adv).mean()
