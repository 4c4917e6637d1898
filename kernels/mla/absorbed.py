"""Multi-head latent attention decoded with the weight absorption (``attn_impl="absorb"``).

The cache holds only the latent c_kv (rank r) and the shared RoPE key k_pe per token.
Since q_nopeᵀ (W_UK c) = (W_UKᵀ q_nope)ᵀ c, W_UK is folded into the query, so scores are
taken directly against the latent; and since Σ p W_UV c = W_UV (Σ p c), W_UV is applied
once after attending. Positions enter only through the decoupled RoPE part, which is
why the latent can be cached without them.
"""

from __future__ import annotations

import torch
from torch import Tensor

from kernels.mla.config import MLAConfig, apply_rope, rms_norm

__all__ = ["absorbed_decode", "absorbed_step", "cache_elements_per_token"]


def absorbed_step(
    x_t: Tensor, pos: int, cache: dict[str, Tensor] | None, w: dict[str, Tensor], cfg: MLAConfig,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Same contract as ``naive_step``; the cache is {"kv": [B, S, r], "pe": [B, S, rope]}."""
    B = x_t.shape[0]
    H, n, r = cfg.heads, cfg.nope, cfg.rope
    scale = (n + r) ** -0.5
    wkv_b = w["wkv_b"].view(H, n + cfg.v_dim, cfg.kv_rank)
    w_uk, w_uv = wkv_b[:, :n], wkv_b[:, n:]  # [H, n, rank], [H, v, rank]
    p = torch.full((B,), pos, device=x_t.device)
    q = (x_t @ w["wq"].T).view(B, H, n + r)
    q_pe = apply_rope(q[..., n:], p[:, None], cfg.rope_base)
    q_latent = torch.einsum("bhn,hnc->bhc", q[..., :n], w_uk)  # W_UK absorbed into q
    kv = x_t @ w["wkv_a"].T
    c_t = rms_norm(kv[:, : cfg.kv_rank], w["kv_norm"])
    pe_t = apply_rope(kv[:, cfg.kv_rank :], p, cfg.rope_base)
    C = c_t[:, None] if cache is None else torch.cat([cache["kv"], c_t[:, None]], 1)
    P = pe_t[:, None] if cache is None else torch.cat([cache["pe"], pe_t[:, None]], 1)
    scores = (
        torch.einsum("bhc,bsc->bhs", q_latent, C) + torch.einsum("bhr,bsr->bhs", q_pe, P)
    ) * scale
    o_latent = torch.einsum("bhs,bsc->bhc", scores.softmax(-1), C)
    o = torch.einsum("bhc,hvc->bhv", o_latent, w_uv)  # W_UV applied after attending
    return o.reshape(B, H * cfg.v_dim) @ w["wo"].T, {"kv": C, "pe": P}


def absorbed_decode(
    x: Tensor, w: dict[str, Tensor], cfg: MLAConfig, *, start: int = 0,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Same contract as ``naive_decode``; the cache is {"kv": [B, T, r], "pe": [B, T, rope]}."""
    cache = None
    outputs = []
    for t in range(x.shape[1]):
        out, cache = absorbed_step(x[:, t], start + t, cache, w, cfg)
        outputs.append(out)
    assert cache is not None
    return torch.stack(outputs, 1), cache


def cache_elements_per_token(cfg: MLAConfig, form: str) -> int:
    """Elements cached per token per layer, counted on tensors allocated on the meta
    device: ``absorbed`` (latent + RoPE key), ``naive`` (per-head K and V as in the
    reference's naive path) or ``mha`` (2·H·d_h with d_h = nope)."""
    meta = torch.device("meta")
    if form == "absorbed":
        parts = [torch.empty(cfg.kv_rank, device=meta), torch.empty(cfg.rope, device=meta)]
    elif form == "naive":
        parts = [
            torch.empty(cfg.heads, cfg.nope + cfg.rope, device=meta),
            torch.empty(cfg.heads, cfg.v_dim, device=meta),
        ]
    elif form == "mha":
        parts = [torch.empty(2, cfg.heads, cfg.nope, device=meta)]
    else:
        raise ValueError(f"unknown cache form {form!r}; use absorbed, naive or mha")
    return sum(p.numel() for p in parts)
