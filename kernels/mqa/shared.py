"""Multi-query attention as one batched product: the single KV head is broadcast to
every query head without copying (an expand, not a repeat), so the cache holds 2·d_h
elements per token: 1/H of multi-head attention's."""

from __future__ import annotations

import torch

__all__ = ["mqa_attention", "mqa_decode"]


def mqa_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    """q: [B, T, H, D]; k, v: [B, S, 1, D] → [B, T, H, D]."""
    B, T, H, D = q.shape
    S = k.shape[1]
    scores = torch.einsum("bthd,bsd->bhts", q.float(), k.float()[:, :, 0]) * D**-0.5
    if causal:
        visible = torch.arange(S, device=q.device)[None, :] <= torch.arange(T, device=q.device)[:, None] + S - T
        scores = scores.masked_fill(~visible, float("-inf"))
    return torch.einsum("bhts,bsd->bthd", scores.softmax(-1), v.float()[:, :, 0]).to(v.dtype)


def mqa_decode(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Token-by-token decoding: step t appends k_t, v_t of the single KV head to the cache
    and attends from q_t over it. Returns the outputs [B, T, H, D] and the cache."""
    cache_k, cache_v = k[:, :0], v[:, :0]
    outputs = []
    for t in range(q.shape[1]):
        cache_k = torch.cat([cache_k, k[:, t : t + 1]], dim=1)
        cache_v = torch.cat([cache_v, v[:, t : t + 1]], dim=1)
        outputs.append(mqa_attention(q[:, t : t + 1], cache_k, cache_v))
    return torch.cat(outputs, dim=1), {"k": cache_k, "v": cache_v}
