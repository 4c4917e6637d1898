"""A top-k MoE layer, the obvious way: every token, every chosen expert, one at a time,
each expert a SwiGLU feed-forward written with the pinned formula."""

from __future__ import annotations

import torch

from kernels.experts import Experts
from kernels.formulas import swiglu_expert

__all__ = ["naive_moe"]


def naive_moe(x: torch.Tensor, chosen: torch.Tensor, weights: torch.Tensor, experts: Experts) -> torch.Tensor:
    """x [T, d]; chosen, weights [T, k] → Σ_j weights[t, j] · E_{chosen[t, j]}(x_t)."""
    rows = []
    for t in range(x.shape[0]):
        acc = torch.zeros(experts.w2.shape[1], device=x.device, dtype=x.dtype)
        for j in range(chosen.shape[1]):
            e = int(chosen[t, j])
            acc = acc + weights[t, j] * swiglu_expert(x[t : t + 1], experts.w1[e], experts.w3[e], experts.w2[e])[0]
        rows.append(acc)
    return torch.stack(rows)
