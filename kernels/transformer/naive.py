"""Scaled dot-product attention, the obvious way: one query at a time, in float32.

    o_i = Σ_j softmax_j(q_i·k_j / √d + mask_ij) v_j

With ``causal`` a query at position i (counted from the end of the keys, so a decode
step sees the whole cache) attends to keys j ≤ i + (S − T).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["naive_attention", "naive_probabilities"]


def naive_probabilities(q: Tensor, k: Tensor, *, causal: bool = True, scale: float | None = None) -> Tensor:
    """The attention matrix P: [B, H, T, S], row by row."""
    q, k = q.float(), k.float()
    B, T, H, D = q.shape
    S = k.shape[1]
    scale = D**-0.5 if scale is None else scale
    rows = []
    for i in range(T):
        scores = torch.einsum("bhd,bshd->bhs", q[:, i], k) * scale
        if causal:
            visible = torch.arange(S, device=q.device) <= i + (S - T)
            scores = scores.masked_fill(~visible, float("-inf"))
        top = scores.max(dim=-1, keepdim=True).values
        e = (scores - top).exp()
        rows.append(e / e.sum(dim=-1, keepdim=True))
    return torch.stack(rows, dim=2)


def naive_attention(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = True, scale: float | None = None) -> Tensor:
    """q: [B, T, H, D]; k, v: [B, S, H, D] → o: [B, T, H, D]."""
    p = naive_probabilities(q, k, causal=causal, scale=scale)
    outputs = [torch.einsum("bhs,bshd->bhd", p[:, :, i], v.float()) for i in range(q.shape[1])]
    return torch.stack(outputs, dim=1).to(v.dtype)
