"""Mamba2's state-space recurrence (scalar decay per head), one token at a time, float32.

    h ← e^{g_t} h + k_t v_tᵀ;   o_t = hᵀ (scale · q_t)

In Mamba2's names k is B, q is C, v is x·Δ and e^{g} = e^{Δ·A}.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["naive_recurrent_ssd"]


def naive_recurrent_ssd(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, *, scale: float = 1.0, initial_state: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """q, k: [B, T, H, K]; v: [B, T, H, V]; g: [B, T, H]; state [B, H, K, V]."""
    out_dtype = v.dtype
    q, k, v, g = (x.float() for x in (q, k, v, g))
    B, T, H, K = q.shape
    h = q.new_zeros(B, H, K, v.shape[-1]) if initial_state is None else initial_state.float()
    outputs = []
    for t in range(T):
        h = h * g[:, t].exp()[..., None, None] + k[:, t, :, :, None] * v[:, t, :, None, :]
        outputs.append((h * (q[:, t] * scale)[..., None]).sum(-2))
    return torch.stack(outputs, dim=1).to(out_dtype), h
