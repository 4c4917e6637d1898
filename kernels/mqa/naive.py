"""Multi-query attention, the obvious way: every query head loops over the one shared
key/value head."""

from __future__ import annotations

import torch

__all__ = ["naive_mqa"]


def naive_mqa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    """q: [B, T, H, D]; k: [B, S, 1, D], v: [B, S, 1, Dv] → [B, T, H, Dv]."""
    B, T, H, D = q.shape
    S = k.shape[1]
    q, k, v = q.float(), k.float()[:, :, 0], v.float()[:, :, 0]
    out = torch.zeros(B, T, H, v.shape[-1], device=q.device)
    for h in range(H):
        scores = torch.einsum("btd,bsd->bts", q[:, :, h], k) * D**-0.5
        if causal:
            visible = torch.arange(S, device=q.device)[None, :] <= torch.arange(T, device=q.device)[:, None] + S - T
            scores = scores.masked_fill(~visible, float("-inf"))
        out[:, :, h] = scores.softmax(dim=-1) @ v
    return out
