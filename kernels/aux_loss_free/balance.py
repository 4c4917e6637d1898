"""Auxiliary-loss-free load balancing: batched biased top-k routing and the bias update.

After each step every expert's bias moves by a fixed step u towards balance,
    Δb = u · sign(mean(c) − c),   then Δb −= mean(Δb)     (torchtitan's centred form)
where c counts the tokens each expert received. Overloaded experts become less
attractive, underloaded ones more, without any loss term touching the gradients.
"""

from __future__ import annotations

import torch

__all__ = ["bias_update", "load_imbalance", "route"]


def route(
    logits: torch.Tensor, bias: torch.Tensor, k: int, route_scale: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as ``naive_route``."""
    s = torch.sigmoid(logits)
    chosen = torch.sort(s + bias, dim=-1, descending=True, stable=True).indices[:, :k]
    picked = s.gather(1, chosen)
    return chosen, picked / picked.sum(-1, keepdim=True) * route_scale


def bias_update(bias: torch.Tensor, counts: torch.Tensor, step: float) -> torch.Tensor:
    delta = step * torch.sign(counts.float().mean() - counts.float())
    return bias + (delta - delta.mean())


def load_imbalance(counts: torch.Tensor) -> float:
    """max / mean tokens per expert (1 is perfect balance)."""
    c = counts.float()
    return float(c.max() / c.mean())
