"""DeltaNet in chunkwise form: the UT transform of the delta rule.

Unrolling h_i = h_{i−1} + k_i u_iᵀ with u_i = β_i (v_i − h_{i−1}ᵀ k_i) over a chunk of C
tokens, the corrected values of a whole chunk solve one unit lower-triangular system

    (I + diag(β) tril₋₁(K Kᵀ)) U = diag(β) (V − K h₀),

so U = Ũ − W h₀ with Ũ = T⁻¹ diag(β) V and W = T⁻¹ diag(β) K computed for every chunk
at once. Then O = Q h₀ + tril(Q Kᵀ) U and h_C = h₀ + Kᵀ U, and only this inter-chunk
step runs sequentially. It is Gated DeltaNet's chunk form with every gate open,
written on its own so that each is checked against its own token loop. The tail is
padded with β = 0, k = 0, which leaves the state unchanged.
"""

from __future__ import annotations

import torch
from torch import Tensor

from kernels.gated_deltanet.chunk import chunked, starting_state, unchunked

__all__ = ["chunk_delta_rule"]


def chunk_delta_rule(
    q: Tensor, k: Tensor, v: Tensor, beta: Tensor, *, scale: float | None = None,
    initial_state: Tensor | None = None, chunk_size: int = 64,
) -> tuple[Tensor, Tensor]:
    """Same arguments and results as ``naive_recurrent_delta_rule``."""
    out_dtype, T, C = v.dtype, q.shape[1], chunk_size
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    q, k, v, beta = chunked(C, q, k, v, beta)  # [B, H, N, C, K|V] and [B, H, N, C]
    q = q * scale

    inclusive = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()
    strict = inclusive.tril(-1)
    A = (beta[..., None] * (k @ k.transpose(-1, -2))).masked_fill(~strict, 0.0)
    u_tilde = torch.linalg.solve_triangular(A, beta[..., None] * v, upper=False, unitriangular=True)
    w = torch.linalg.solve_triangular(A, beta[..., None] * k, upper=False, unitriangular=True)
    attn = (q @ k.transpose(-1, -2)).masked_fill(~inclusive, 0.0)

    h, outputs = starting_state(initial_state, q, v), []
    for n in range(q.shape[2]):  # the state passes from chunk to chunk
        u = u_tilde[:, :, n] - w[:, :, n] @ h
        outputs.append(q[:, :, n] @ h + attn[:, :, n] @ u)
        h = h + k[:, :, n].transpose(-1, -2) @ u
    return unchunked(outputs, T, out_dtype), h
