"""Multi-head latent attention decoded the obvious way: expand the latent into per-head
keys and values at every step and cache those (the reference's ``attn_impl="naive"``).

Per token: c_kv = RMSNorm(W_DKV x) (rank r), k_pe = RoPE(W_KR x) (shared by all heads);
per head: k = [W_UK c_kv ; k_pe], v = W_UV c_kv, q = [q_nope ; RoPE(q_pe)]. RMSNorm and
RoPE are the pinned formulas of :mod:`kernels.formulas`, not the absorbed form's own.
"""

from __future__ import annotations

import torch
from torch import Tensor

from kernels.formulas import rms_norm, rotate_pairs
from kernels.mla.config import MLAConfig

__all__ = ["naive_decode", "naive_step"]


def naive_step(
    x_t: Tensor, pos: int, cache: dict[str, Tensor] | None, w: dict[str, Tensor], cfg: MLAConfig,
) -> tuple[Tensor, dict[str, Tensor]]:
    """One decode step: x_t [B, dim] at position ``pos``; the cache holds per-head keys
    [B, S, H, nope+rope] and values [B, S, H, v]. Returns the output [B, dim] and the
    cache with this token appended."""
    B = x_t.shape[0]
    H, n, r = cfg.heads, cfg.nope, cfg.rope
    scale = (n + r) ** -0.5
    p = torch.full((B,), pos, device=x_t.device)
    q = (x_t @ w["wq"].T).view(B, H, n + r)
    q = torch.cat([q[..., :n], rotate_pairs(q[..., n:], p[:, None], cfg.rope_base)], dim=-1)
    kv = x_t @ w["wkv_a"].T
    c_kv = rms_norm(kv[:, : cfg.kv_rank], w["kv_norm"])
    k_pe = rotate_pairs(kv[:, cfg.kv_rank :], p, cfg.rope_base)
    up = (c_kv @ w["wkv_b"].T).view(B, H, n + cfg.v_dim)
    k_t = torch.cat([up[..., :n], k_pe[:, None].expand(B, H, r)], dim=-1)
    v_t = up[..., n:]
    K = k_t[:, None] if cache is None else torch.cat([cache["k"], k_t[:, None]], 1)
    V = v_t[:, None] if cache is None else torch.cat([cache["v"], v_t[:, None]], 1)
    heads = []
    for h in range(H):
        attn = (torch.einsum("bd,bsd->bs", q[:, h], K[:, :, h]) * scale).softmax(-1)
        heads.append(torch.einsum("bs,bsd->bd", attn, V[:, :, h]))
    return torch.cat(heads, -1) @ w["wo"].T, {"k": K, "v": V}


def naive_decode(
    x: Tensor, w: dict[str, Tensor], cfg: MLAConfig, *, start: int = 0,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Decode x [B, T, dim] one token at a time from position ``start``.
    Returns the outputs [B, T, dim] and the cache {"k": [B, T, H, nope+rope], "v": [B, T, H, v]}."""
    cache = None
    outputs = []
    for t in range(x.shape[1]):
        out, cache = naive_step(x[:, t], start + t, cache, w, cfg)
        outputs.append(out)
    assert cache is not None
    return torch.stack(outputs, 1), cache
