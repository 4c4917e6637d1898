"""The categorical flow, integrated the obvious way: Euler steps of the velocity field
that carries x towards the predicted distribution π on the simplex,
    dx/dt = (π − x) / (1 − t)."""

from __future__ import annotations

import torch

__all__ = ["euler_flow"]


def euler_flow(x: torch.Tensor, pi: torch.Tensor, s: float, t: float, steps: int) -> torch.Tensor:
    h = (t - s) / steps
    for i in range(steps):
        tau = s + i * h
        x = x + h * (pi - x) / (1 - tau)
    return x
