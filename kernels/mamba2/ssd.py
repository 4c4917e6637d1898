"""Mamba2's state-space duality: the chunked form of the scalar-decay recurrence.

Within a chunk, with G the cumulative log decay and Γ_ij = e^{G_i − G_j} (j ≤ i):

    O   = diag(e^{G}) Q h₀ + (Γ ⊙ tril(Q Kᵀ)) V          (a masked, decayed attention)
    h_C = e^{G_C} h₀ + (K ⊙ e^{G_C − G})ᵀ V

It is Gated DeltaNet's chunk form without the delta-rule correction (U = V).
"""

from __future__ import annotations

import torch
from torch import Tensor

from kernels.gated_deltanet.chunk import chunked, starting_state, unchunked

__all__ = ["chunk_ssd"]


def chunk_ssd(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, *, scale: float = 1.0, initial_state: Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[Tensor, Tensor]:
    """Same arguments and results as ``naive_recurrent_ssd``."""
    out_dtype, T, C = v.dtype, q.shape[1], chunk_size
    q, k, v, g = chunked(C, q, k, v, g)
    q = q * scale
    G = g.cumsum(-1)
    inclusive = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()
    diff = G[..., :, None] - G[..., None, :]
    decay = diff.masked_fill(~inclusive, float("-inf")).exp()
    intra = ((q @ k.transpose(-1, -2)) * decay) @ v  # [B, H, N, C, V]
    q_decay = q * G.exp()[..., None]
    k_decay = k * (G[..., -1:] - G).exp()[..., None]
    h, outputs = starting_state(initial_state, q, v), []
    for n in range(q.shape[2]):
        outputs.append(intra[:, :, n] + q_decay[:, :, n] @ h)
        h = h * G[:, :, n, -1].exp()[..., None, None] + k_decay[:, :, n].transpose(-1, -2) @ v[:, :, n]
    return unchunked(outputs, T, out_dtype), h
