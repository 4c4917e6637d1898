"""A top-k MoE layer, the obvious way: every token, every chosen expert, one at a time."""

from __future__ import annotations

import torch

from kernels.experts import Activation, Experts, apply_expert, swiglu

__all__ = ["naive_moe"]


def naive_moe(
    x: torch.Tensor,
    chosen: torch.Tensor,
    weights: torch.Tensor,
    experts: Experts,
    act: Activation = swiglu,
) -> torch.Tensor:
    """x [T, d]; chosen, weights [T, k] → Σ_j weights[t, j] · E_{chosen[t, j]}(x_t)."""
    rows = []
    for t in range(x.shape[0]):
        acc = torch.zeros(experts.w2.shape[1], device=x.device, dtype=x.dtype)
        for j in range(chosen.shape[1]):
            acc = (
                acc + weights[t, j] * apply_expert(x[t : t + 1], experts, int(chosen[t, j]), act)[0]
            )
        rows.append(acc)
    return torch.stack(rows)
