"""DanceGRPO's pieces written out by hand.

A denoising step of a rectified-flow model run as an SDE: from noise level σ to σ′ < σ
the sample moves by the model velocity and gets fresh noise,
    x′ = x + (σ′ − σ)·v + σ_t·ε,   σ_t = η·√(σ − σ′)
so x′ is Gaussian with mean x + (σ′ − σ)·v and standard deviation σ_t; its log-density,
averaged over dimensions, is the policy log-probability GRPO needs. Advantages are
normalised per group with std + 1e-8 and clipped to ±5.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["naive_advantages", "naive_step_logprob"]


def naive_step_logprob(x_next: Tensor, x: Tensor, v: Tensor, sigma: float, sigma_next: float, eta: float) -> Tensor:
    """Per-sample mean over dimensions of log N(x_next; x + (σ′−σ)v, σ_t²), element by element."""
    std = eta * math.sqrt(sigma - sigma_next)
    out = []
    for b in range(x.shape[0]):
        mean = x[b] + (sigma_next - sigma) * v[b]
        total = x.new_zeros(())
        for xn, m in zip(x_next[b].flatten(), mean.flatten(), strict=True):
            total = total - (xn - m) ** 2 / (2 * std**2) - math.log(std) - 0.5 * math.log(2 * math.pi)
        out.append(total / x[b].numel())
    return torch.stack(out)


def naive_advantages(rewards: list[float], group: int, clip: float = 5.0) -> list[float]:
    out = []
    for g in range(0, len(rewards), group):
        r = rewards[g : g + group]
        mean = sum(r) / len(r)
        std = math.sqrt(sum((x - mean) ** 2 for x in r) / len(r))
        out += [max(-clip, min(clip, (x - mean) / (std + 1e-8))) for x in r]
    return out
