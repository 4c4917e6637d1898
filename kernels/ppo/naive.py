"""PPO's advantage estimate, the obvious way: generalised advantage estimation as a
backward loop over time,

    δ_t = r_t + γ·V(s_{t+1})·(1 − done_t) − V(s_t)
    A_t = δ_t + γλ·(1 − done_t)·A_{t+1}

and the clipped surrogate token by token: −min(ρ_t A_t, clip(ρ_t, 1 − ε, 1 + ε) A_t).
"""

from __future__ import annotations

import torch

__all__ = ["naive_clipped_loss", "naive_gae"]


def naive_gae(
    rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, gamma: float, lam: float
) -> torch.Tensor:
    """rewards, dones: [T]; values: [T + 1] (the last is the bootstrap value)."""
    T = rewards.shape[0]
    adv = [rewards.new_zeros(())] * T
    running = rewards.new_zeros(())
    for t in reversed(range(T)):
        keep = 1.0 - dones[t]
        delta = rewards[t] + gamma * values[t + 1] * keep - values[t]
        running = delta + gamma * lam * keep * running
        adv[t] = running
    return torch.stack(adv)


def naive_clipped_loss(logp: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor, eps: float = 0.2) -> torch.Tensor:
    total = logp.new_zeros(())
    for t in range(logp.shape[0]):
        ratio = torch.exp(logp[t] - logp_old[t])
        total = total - torch.minimum(ratio * adv[t], ratio.clamp(1 - eps, 1 + eps) * adv[t])
    return total / logp.shape[0]
