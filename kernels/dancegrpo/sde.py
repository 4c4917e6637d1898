"""DanceGRPO with closed forms: the SDE step's log-probability through
torch.distributions.Normal, the step itself, advantages per group, and the clipped
policy loss over denoising steps (clip range 1e-4: the ratio barely moves per update)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["advantages", "clipped_loss", "sde_step", "step_logprob"]


def sde_step(x: Tensor, v: Tensor, sigma: float, sigma_next: float, eta: float, gen: torch.Generator) -> Tensor:
    std = eta * math.sqrt(sigma - sigma_next)
    noise = torch.randn(x.shape, generator=gen, dtype=torch.float64).to(x.device, x.dtype)
    return x + (sigma_next - sigma) * v + std * noise


def step_logprob(x_next: Tensor, x: Tensor, v: Tensor, sigma: float, sigma_next: float, eta: float) -> Tensor:
    std = eta * math.sqrt(sigma - sigma_next)
    dist = torch.distributions.Normal(x + (sigma_next - sigma) * v, std)
    logp: torch.Tensor = dist.log_prob(x_next)  # type: ignore[no-untyped-call]
    return logp.flatten(1).mean(-1)


def advantages(rewards: torch.Tensor, group: int, clip: float = 5.0) -> torch.Tensor:
    r = rewards.view(-1, group)
    a = (r - r.mean(-1, keepdim=True)) / (r.std(-1, unbiased=False, keepdim=True) + 1e-8)
    return a.clamp(-clip, clip).flatten()


def clipped_loss(
    logp: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor, clip_range: float = 1e-4
) -> torch.Tensor:
    ratio = torch.exp(logp - logp_old)
    return torch.maximum(-adv * ratio, -adv * ratio.clamp(1 - clip_range, 1 + clip_range)).mean()
