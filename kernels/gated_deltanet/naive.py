"""Gated DeltaNet, the obvious way: one token at a time, in float32.

State h ∈ ℝ^{K×V} per head, gate α_t = exp(g_t) with g_t ≤ 0:

    h ← α_t h;   v′ = β_t (v_t − hᵀ k_t);   h ← h + k_t v′ᵀ;   o_t = hᵀ (scale · q_t)

which is h_t = α_t (I − β_t k_t k_tᵀ) h_{t−1} + β_t k_t v_tᵀ.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["naive_recurrent_gated_delta_rule"]


def naive_recurrent_gated_delta_rule(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor, *, scale: float | None = None,
    initial_state: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """q, k: [B, T, H, K]; v: [B, T, H, V]; g (log gate), beta: [B, T, H];
    initial_state: [B, H, K, V]. Returns (o [B, T, H, V], final state [B, H, K, V])."""
    out_dtype = v.dtype
    q, k, v, g, beta = (x.float() for x in (q, k, v, g, beta))
    B, T, H, K = q.shape
    V = v.shape[-1]
    scale = K**-0.5 if scale is None else scale
    h = q.new_zeros(B, H, K, V) if initial_state is None else initial_state.float()
    outputs = []
    for t in range(T):
        h = h * g[:, t].exp()[..., None, None]
        v_new = beta[:, t, :, None] * (v[:, t] - (h * k[:, t, :, :, None]).sum(-2))
        h = h + k[:, t, :, :, None] * v_new[:, :, None, :]
        outputs.append((h * (q[:, t] * scale)[..., None]).sum(-2))
    return torch.stack(outputs, dim=1).to(out_dtype), h
