"""Kimi Delta Attention, the obvious way: one token at a time, in float32, written as the
transition of S = hᵀ ∈ ℝ^{V×K} (kernels.md's form, not the step form of the chunked
code's derivation):

    S_t = S_{t−1} · Diag(α_t) (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ,   α_t = e^{g_t} ∈ ℝ^K
    o_t = S_t (scale · q_t)

The final state is returned as h = Sᵀ [B, H, K, V].
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["naive_recurrent_kda"]


def naive_recurrent_kda(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor, *, scale: float | None = None,
    initial_state: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """q, k, g: [B, T, H, K]; v: [B, T, H, V]; beta: [B, T, H]; state [B, H, K, V]."""
    B, T, H, K = q.shape
    scale = K**-0.5 if scale is None else scale
    eye = torch.eye(K, device=q.device)
    # S = hᵀ [B, H, V, K]: zero unless a state is given
    S = torch.zeros(B, H, v.shape[-1], K, device=q.device) if initial_state is None else initial_state.float().mT
    outputs = []
    for t in range(T):
        kt, b = k[:, t].float(), beta[:, t].float()[..., None, None]
        transition = g[:, t].float().exp()[..., :, None] * (eye - b * kt[..., :, None] * kt[..., None, :])
        S = S @ transition + b * v[:, t].float()[..., :, None] * kt[..., None, :]
        outputs.append((S @ (scale * q[:, t].float())[..., None])[..., 0])
    return torch.stack(outputs, dim=1).to(v.dtype), S.mT
