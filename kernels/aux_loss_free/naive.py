"""Auxiliary-loss-free routing, the obvious way: token by token, choose the top-k experts
by biased score s + b, and weight them by their unbiased scores renormalised.

Scores are sigmoids of the router logits (DeepSeek-V3). The bias steers only which
experts are chosen; it never enters the weights, so it needs no gradient.
"""

from __future__ import annotations

import torch

__all__ = ["naive_route"]


def naive_route(
    logits: torch.Tensor, bias: torch.Tensor, k: int, route_scale: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """logits [T, E], bias [E] → (chosen experts [T, k], weights [T, k])."""
    chosen, weights = [], []
    for t in range(logits.shape[0]):
        s = torch.sigmoid(logits[t])
        order = torch.sort(s + bias, descending=True, stable=True).indices[:k]
        chosen.append(order)
        weights.append(s[order] / s[order].sum() * route_scale)
    return torch.stack(chosen), torch.stack(weights)
