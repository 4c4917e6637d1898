"""DiffusionNFT's loss as written, sample by sample.

    r   = clip(clip(A, ±A_max) / A_max / 2 + ½, 0, 1)
    v⁺  = β·v_θ + (1 − β)·v_old          v⁻ = (1 + β)·v_old − β·v_θ
    x̂₀ = x_t − t·v                       L± = ‖x̂₀± − x₀‖² / mean|x̂₀± − x₀|   (weight detached)
    L   = A_max·[r·L⁺ + (1 − r)·L⁻]/β + β_KL·‖v_θ − v_ref‖²
averaged over the batch (squared norms as means over dimensions).
"""

from __future__ import annotations

from torch import Tensor

__all__ = ["naive_nft_loss", "reward_weight"]


def reward_weight(a: float, a_max: float) -> float:
    return min(1.0, max(0.0, max(-a_max, min(a_max, a)) / a_max / 2 + 0.5))


def naive_nft_loss(
    v_theta: Tensor, v_old: Tensor, v_ref: Tensor, x_t: Tensor, x0: Tensor, t: Tensor, adv: list[float], *,
    beta: float, a_max: float, beta_kl: float,
) -> Tensor:
    total = v_theta.new_zeros(())
    for i in range(v_theta.shape[0]):
        r = reward_weight(adv[i], a_max)
        v_pos = beta * v_theta[i] + (1 - beta) * v_old[i]
        v_neg = (1 + beta) * v_old[i] - beta * v_theta[i]
        losses = []
        for v in (v_pos, v_neg):
            err = x_t[i] - t[i] * v - x0[i]
            losses.append(err.pow(2).mean() / err.abs().mean().detach())
        total = total + a_max * (r * losses[0] + (1 - r) * losses[1]) / beta
        total = total + beta_kl * (v_theta[i] - v_ref[i]).pow(2).mean()
    return total / v_theta.shape[0]
