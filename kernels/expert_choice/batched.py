"""Expert Choice routing in one pass: (G, I) = TopK(Sᵀ, k) gives every expert exactly
k = n·c/e tokens (c the capacity factor); the experts run on their [k, d] gathers and
the weighted results are scattered back with index_add. A token may be chosen by
several experts or by none."""

from __future__ import annotations

import torch

from kernels.experts import Experts, apply_expert

__all__ = ["expert_choice", "tokens_per_expert"]


def tokens_per_expert(n: int, experts: int, capacity_factor: float) -> int:
    return int(n * capacity_factor / experts)


def expert_choice(
    x: torch.Tensor, w_gate: torch.Tensor, experts: Experts, k: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Returns (output [n, d], chosen token indices [e, k])."""
    scores = (x @ w_gate.T).softmax(-1)  # [n, e]
    index = torch.sort(scores.T, dim=-1, descending=True, stable=True).indices[:, :k]  # [e, k]
    gates = scores.T.gather(1, index)  # [e, k]
    out = torch.zeros_like(x)
    for e in range(experts.count):
        y = apply_expert(x[index[e]], experts, e) * gates[e, :, None]
        out = out.index_add(0, index[e], y)
    return out, index
