"""Mamba2's state-space duality: the chunked form of the scalar-decay recurrence.

Within a chunk, with G the cumulative log decay and Γ_ij = e^{G_i − G_j} (j ≤ i):

    O   = diag(e^{G}) Q h₀ + (Γ ⊙ tril(Q Kᵀ)) V          (a masked, decayed attention)
    h_C = e^{G_C} h₀ + (K ⊙ e^{G_C − G})ᵀ V

It is Gated DeltaNet's chunk form without the delta-rule correction (U = V).
"""

from __future__ import annotations

import torch

from kernels.gated_deltanet.chunk import to_chunks

__all__ = ["chunk_ssd"]


def chunk_ssd(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    *,
    scale: float = 1.0,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same arguments and results as ``naive_recurrent_ssd``."""
    out_dtype = v.dtype
    B, T, H, K = q.shape
    V = v.shape[-1]
    C = chunk_size
    pad = (-T) % C
    q, k, v = (to_chunks(x.float(), pad, C) for x in (q, k, v))
    g = to_chunks(g.float(), pad, C)
    q = q * scale
    N = q.shape[2]
    G = g.cumsum(-1)
    inclusive = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()
    diff = G[..., :, None] - G[..., None, :]
    decay = diff.masked_fill(~inclusive, float("-inf")).exp()
    intra = ((q @ k.transpose(-1, -2)) * decay) @ v  # [B, H, N, C, V]
    q_decay = q * G.exp()[..., None]
    k_decay = k * (G[..., -1:] - G).exp()[..., None]
    h = q.new_zeros(B, H, K, V) if initial_state is None else initial_state.float()
    outputs = []
    for n in range(N):
        outputs.append(intra[:, :, n] + q_decay[:, :, n] @ h)
        h = (
            h * G[:, :, n, -1].exp()[..., None, None]
            + k_decay[:, :, n].transpose(-1, -2) @ v[:, :, n]
        )
    o = torch.stack(outputs, dim=2).permute(0, 2, 3, 1, 4).reshape(B, N * C, H, V)[:, :T]
    return o.to(out_dtype), h
