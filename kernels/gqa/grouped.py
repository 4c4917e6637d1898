"""Grouped-query attention without copying KV heads, and the MHA → GQA conversion.

``grouped_attention`` reshapes the H query heads into [Hkv, G] and contracts each group
against its one KV head in a single einsum, so the cache holds 2·Hkv·d_h elements per
token instead of 2·H·d_h. ``mha_to_gqa`` turns a multi-head checkpoint into a grouped
one by mean-pooling the key and value projections of the heads in each group (the
GQA paper's uptraining starting point).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["grouped_attention", "kv_cache_elements_per_token", "mha_to_gqa"]


def grouped_attention(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = True, scale: float | None = None) -> Tensor:
    """q: [B, T, H, D]; k: [B, S, Hkv, D], v: [B, S, Hkv, Dv] → [B, T, H, Dv]."""
    B, T, H, D = q.shape
    S, Hkv = k.shape[1], k.shape[2]
    if H % Hkv:
        raise ValueError(f"{H} query heads cannot be grouped over {Hkv} KV heads")
    G = H // Hkv
    scale = D**-0.5 if scale is None else scale
    qg = q.float().reshape(B, T, Hkv, G, D)
    scores = torch.einsum("btngd,bsnd->bngts", qg, k.float()) * scale
    if causal:
        visible = torch.arange(S, device=q.device)[None, :] <= torch.arange(T, device=q.device)[:, None] + S - T
        scores = scores.masked_fill(~visible, float("-inf"))
    p = scores.softmax(dim=-1)
    out = torch.einsum("bngts,bsnd->btngd", p, v.float())
    return out.reshape(B, T, H, v.shape[-1]).to(v.dtype)


def mha_to_gqa(w_k: torch.Tensor, w_v: torch.Tensor, heads: int, kv_heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean-pool the per-head rows of K and V projections ([H·D, d_model] and [H·Dv,
    d_model]) in groups of H / Hkv consecutive heads → [Hkv·D, d_model], [Hkv·Dv, d_model]."""
    if heads % kv_heads:
        raise ValueError(f"{heads} heads cannot be pooled into {kv_heads} groups")

    def pool(w: torch.Tensor) -> torch.Tensor:
        D = w.shape[0] // heads
        return w.reshape(kv_heads, heads // kv_heads, D, -1).mean(dim=1).reshape(kv_heads * D, -1)

    return pool(w_k), pool(w_v)


def kv_cache_elements_per_token(kv_heads: int, head_dim: int) -> int:
    """Keys and values of every KV head: 2·Hkv·d_h per token per layer."""
    k = torch.empty(1, 1, kv_heads, head_dim, device="meta")
    return 2 * k.numel()
