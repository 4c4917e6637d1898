"""DeepSeek Sparse Attention in batched form: the lightning indexer scores all (t, s)
pairs at once, the top-k keys of every query become a boolean mask (scattered from a
stable sort), and attention runs once under that mask.

Each query keeps min(k, t + 1) keys; with k ≥ T every earlier key is kept and the result
is dense causal attention.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["dsa_attention", "lightning_indexer", "topk_mask"]


def lightning_indexer(q_idx: Tensor, w_idx: Tensor, k_idx: Tensor) -> Tensor:
    """I [B, T, S] = Σ_j w[b,t,j] · ReLU(q[b,t,j] · k[b,s]), −∞ above the diagonal."""
    scores = torch.einsum(
        "btj,btjs->bts", w_idx, torch.relu(torch.einsum("btjd,bsd->btjs", q_idx, k_idx))
    )
    T, S = scores.shape[1:]
    future = (
        torch.arange(S, device=scores.device)[None, :]
        > torch.arange(T, device=scores.device)[:, None]
    )
    return scores.masked_fill(future, float("-inf"))


def topk_mask(scores: torch.Tensor, topk: int) -> torch.Tensor:
    """True where key s is among query t's top-k visible keys (ties: earlier key first)."""
    order = torch.sort(scores, dim=-1, descending=True, stable=True).indices[..., :topk]
    mask = torch.zeros_like(scores, dtype=torch.bool).scatter(-1, order, True)
    return mask & torch.isfinite(scores)


def dsa_attention(
    q: Tensor, k: Tensor, v: Tensor, q_idx: Tensor, w_idx: Tensor, k_idx: Tensor, topk: int,
) -> tuple[Tensor, Tensor]:
    """Same inputs as ``naive_dsa``; returns (o [B, T, H, D], mask [B, T, T])."""
    D = q.shape[-1]
    mask = topk_mask(lightning_indexer(q_idx, w_idx, k_idx), topk)
    logits = torch.einsum("bthd,bshd->bhts", q, k) * D**-0.5
    logits = logits.masked_fill(~mask[:, None], float("-inf"))
    return torch.einsum("bhts,bshd->bthd", logits.softmax(-1), v), mask
