"""DiffusionNFT's loss in expanded, batched form.

With e = x_t − t·v_old − x₀ (the old model's error) and Δ = v_θ − v_old, the two
implicit branches are x̂₀± − x₀ = e ∓ t·β·Δ: one residual and one update, mirrored.
This is the form a fused kernel would compute; it never builds v⁺ or v⁻.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["branch_residuals", "nft_loss", "reward_weights"]


def reward_weights(adv: torch.Tensor, a_max: float) -> torch.Tensor:
    return (adv.clamp(-a_max, a_max) / a_max / 2 + 0.5).clamp(0, 1)


def branch_residuals(
    v_theta: Tensor, v_old: Tensor, x_t: Tensor, x0: Tensor, t: Tensor, beta: float,
) -> tuple[Tensor, Tensor]:
    """x̂₀⁺ − x₀ and x̂₀⁻ − x₀ of the implicit positive and negative velocities."""
    tb = t.view((-1,) + (1,) * (v_theta.dim() - 1))
    e = x_t - tb * v_old - x0
    step = tb * beta * (v_theta - v_old)
    return e - step, e + step


def nft_loss(
    v_theta: Tensor, v_old: Tensor, v_ref: Tensor, x_t: Tensor, x0: Tensor, t: Tensor, adv: Tensor, *, beta: float,
    a_max: float, beta_kl: float,
) -> Tensor:
    pos, neg = branch_residuals(v_theta, v_old, x_t, x0, t, beta)
    dims = tuple(range(1, v_theta.dim()))
    l_pos = pos.pow(2).mean(dims) / pos.abs().mean(dims).detach()
    l_neg = neg.pow(2).mean(dims) / neg.abs().mean(dims).detach()
    r = reward_weights(adv, a_max)
    kl = (v_theta - v_ref).pow(2).mean(dims)
    return (a_max * (r * l_pos + (1 - r) * l_neg) / beta + beta_kl * kl).mean()
