"""The categorical flow map in closed form: one jump from time s to time t,

    X_{s,t}(x) = x + (t − s)/(1 − s) · (π − x),

the exact solution of dx/dt = (π − x)/(1 − t) for a fixed prediction π. It is a convex
combination of x and π, so it stays on the simplex; X_{s,s} is the identity, X_{s,1}
lands on π, and maps compose: X_{t,u} ∘ X_{s,t} = X_{s,u}.
"""

from __future__ import annotations

import torch

__all__ = ["flow_map"]


def flow_map(x: torch.Tensor, pi: torch.Tensor, s: float, t: float) -> torch.Tensor:
    return x + (t - s) / (1 - s) * (pi - x)
