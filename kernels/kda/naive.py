"""Kimi Delta Attention, the obvious way: one token at a time, in float32.

Like Gated DeltaNet, but the decay is channel-wise: g_t ∈ ℝ^K and the state's K rows
decay separately before the delta-rule update,

    h ← Diag(e^{g_t}) h;   v′ = β_t (v_t − hᵀ k_t);   h ← h + k_t v′ᵀ;   o_t = hᵀ (scale · q_t).
"""

from __future__ import annotations

import torch

__all__ = ["naive_recurrent_kda"]


def naive_recurrent_kda(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """q, k, g: [B, T, H, K]; v: [B, T, H, V]; beta: [B, T, H]; state [B, H, K, V]."""
    out_dtype = v.dtype
    q, k, v, g, beta = (x.float() for x in (q, k, v, g, beta))
    B, T, H, K = q.shape
    V = v.shape[-1]
    scale = K**-0.5 if scale is None else scale
    h = q.new_zeros(B, H, K, V) if initial_state is None else initial_state.float()
    outputs = []
    for t in range(T):
        h = h * g[:, t].exp()[..., None]
        v_new = beta[:, t, :, None] * (v[:, t] - (h * k[:, t, :, :, None]).sum(-2))
        h = h + k[:, t, :, :, None] * v_new[:, :, None, :]
        outputs.append((h * (q[:, t] * scale)[..., None]).sum(-2))
    return torch.stack(outputs, dim=1).to(out_dtype), h
