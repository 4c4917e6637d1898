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

from kernels.gated_deltanet.chunk import to_chunks

__all__ = ["chunk_delta_rule"]


def chunk_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same arguments and results as ``naive_recurrent_delta_rule``."""
    out_dtype = v.dtype
    B, T, H, K = q.shape
    V = v.shape[-1]
    C = chunk_size
    scale = K**-0.5 if scale is None else scale
    pad = (-T) % C
    q, k, v = (to_chunks(x.float(), pad, C) for x in (q, k, v))  # [B, H, N, C, K|V]
    beta = to_chunks(beta.float(), pad, C)  # [B, H, N, C]
    q = q * scale
    N = q.shape[2]

    inclusive = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()
    strict = inclusive.tril(-1)
    A = (beta[..., None] * (k @ k.transpose(-1, -2))).masked_fill(~strict, 0.0)
    u_tilde = torch.linalg.solve_triangular(A, beta[..., None] * v, upper=False, unitriangular=True)
    w = torch.linalg.solve_triangular(A, beta[..., None] * k, upper=False, unitriangular=True)
    attn = (q @ k.transpose(-1, -2)).masked_fill(~inclusive, 0.0)

    h = q.new_zeros(B, H, K, V) if initial_state is None else initial_state.float()
    outputs = []
    for n in range(N):
        u = u_tilde[:, :, n] - w[:, :, n] @ h
        outputs.append(q[:, :, n] @ h + attn[:, :, n] @ u)
        h = h + k[:, :, n].transpose(-1, -2) @ u
    o = torch.stack(outputs, dim=2).permute(0, 2, 3, 1, 4).reshape(B, N * C, H, V)[:, :T]
    return o.to(out_dtype), h
