"""Grouped-query attention, the obvious way: copy each KV head to the query heads of
its group (query head h·G + g reads KV head h), then run plain multi-head attention."""

from __future__ import annotations

import torch

from kernels.transformer.naive import naive_attention

__all__ = ["naive_gqa"]


def naive_gqa(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = True, scale: float | None = None
) -> torch.Tensor:
    """q: [B, T, H, D]; k: [B, S, Hkv, D], v: [B, S, Hkv, Dv] with H a multiple of Hkv."""
    group = q.shape[2] // k.shape[2]
    k = torch.repeat_interleave(k, group, dim=2)
    v = torch.repeat_interleave(v, group, dim=2)
    return naive_attention(q, k, v, causal=causal, scale=scale)
