"""Kimi Delta Attention, the obvious way: one token at a time, in float32, written as the
transition of S = hᵀ ∈ ℝ^{V×K} (kernels.md's form, not the step form of the chunked
code's derivation):

    S_t = S_{t−1} · Diag(α_t) (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ,   α_t = e^{g_t} ∈ ℝ^K
    o_t = S_t (scale · q_t)

The final state is returned as h = Sᵀ [B, H, K, V].
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
    eye = torch.eye(K, device=q.device)
    S = q.new_zeros(B, H, V, K) if initial_state is None else initial_state.float().transpose(-1, -2)
    outputs = []
    for t in range(T):
        kt, b = k[:, t], beta[:, t, :, None, None]
        transition = g[:, t].exp()[..., :, None] * (eye - b * kt[..., :, None] * kt[..., None, :])
        S = S @ transition + b * v[:, t, :, :, None] * kt[..., None, :]
        outputs.append(S @ (scale * q[:, t, :, :, None]))
    o = torch.stack(outputs, dim=1)[..., 0]
    return o.to(out_dtype), S.transpose(-1, -2)
