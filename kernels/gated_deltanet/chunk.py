"""Gated DeltaNet in chunkwise (WY / UT-transform) form.

Within a chunk of C tokens let G_i = Σ_{j≤i} g_j (log decay since the chunk start) and
Γ_ij = exp(G_i − G_j). Unrolling h_i = α_i h_{i−1} + k_i u_iᵀ, the corrected values
u_i = β_i (v_i − α_i h_{i−1}ᵀ k_i) of a whole chunk solve one unit lower-triangular
system

    (I + diag(β) (Γ ⊙ tril₋₁(K Kᵀ))) U = diag(β) V − diag(β e^{G}) K h₀,

so U = Ũ − W h₀ with Ũ and W computed for all chunks at once. Then

    O   = diag(e^{G}) Q h₀ + (Γ ⊙ tril(Q Kᵀ)) U
    h_C = e^{G_C} h₀ + (K ⊙ e^{G_C − G})ᵀ U

and only this inter-chunk step runs sequentially. The exponents G_i − G_j (j ≤ i) are
never positive, so nothing overflows. T need not be a multiple of C: the tail is padded
with β = 0, k = 0, g = 0, which leaves the state unchanged.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["chunk_gated_delta_rule", "chunked", "starting_state", "to_chunks", "unchunked"]


def to_chunks(x: torch.Tensor, pad: int, C: int) -> torch.Tensor:
    """[B, T, H, *rest] → [B, H, N, C, *rest], zero-padding T to a multiple of C."""
    if pad:
        widths = [0, 0] * (x.dim() - 2) + [0, pad]
        x = F.pad(x, widths)
    B, T, H = x.shape[:3]
    x = x.reshape(B, T // C, C, H, *x.shape[3:])
    order = (0, 3, 1, 2, *range(4, x.dim()))
    return x.permute(*order)


def chunked(C: int, *xs: torch.Tensor) -> list[torch.Tensor]:
    """Per-token inputs [B, T, H, *rest] in float32 chunks [B, H, N, C, *rest], T padded
    to a multiple of C with zeros (which leave a delta-rule state unchanged)."""
    pad = (-xs[0].shape[1]) % C
    return [to_chunks(x.float(), pad, C) for x in xs]


def starting_state(initial_state: torch.Tensor | None, q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The state h₀ [B, H, K, V] in float32: the given one, else zeros (q, v in chunks)."""
    if initial_state is not None:
        return initial_state.float()
    return q.new_zeros(*q.shape[:2], q.shape[-1], v.shape[-1])


def unchunked(outputs: list[torch.Tensor], T: int, dtype: torch.dtype) -> torch.Tensor:
    """Per-chunk outputs [B, H, C, V] back to [B, T, H, V] in ``dtype``, padding dropped."""
    o = torch.stack(outputs, dim=2)  # [B, H, N, C, V]
    B, H, N, C, V = o.shape
    return o.permute(0, 2, 3, 1, 4).reshape(B, N * C, H, V)[:, :T].to(dtype)


def chunk_gated_delta_rule(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor, *, scale: float | None = None,
    initial_state: Tensor | None = None, chunk_size: int = 64,
) -> tuple[Tensor, Tensor]:
    """Same arguments and results as ``naive_recurrent_gated_delta_rule``.

    q, k: [B, T, H, K]; v: [B, T, H, V]; g, beta: [B, T, H]; initial_state: [B, H, K, V].
    """
    if q.dim() != 4 or g.shape != q.shape[:3] or beta.shape != q.shape[:3]:
        raise ValueError(
            f"expected q, k [B, T, H, K] and g, beta [B, T, H]; got q {tuple(q.shape)}, "
            f"g {tuple(g.shape)}, beta {tuple(beta.shape)}"
        )
    out_dtype = v.dtype
    T, K, C = q.shape[1], q.shape[-1], chunk_size
    scale = K**-0.5 if scale is None else scale
    q, k, v, g, beta = chunked(C, q, k, v, g, beta)  # [B, H, N, C, K|V] and [B, H, N, C]
    q = q * scale

    G = g.cumsum(-1)
    inclusive = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()
    strict = inclusive.tril(-1)
    diff = G[..., :, None] - G[..., None, :]
    decay = torch.where(inclusive, diff, torch.full_like(diff, float("-inf"))).exp()

    A = (beta[..., None] * (k @ k.transpose(-1, -2)) * decay).masked_fill(~strict, 0.0)
    u_tilde = torch.linalg.solve_triangular(A, beta[..., None] * v, upper=False, unitriangular=True)
    w = torch.linalg.solve_triangular(
        A, (beta * G.exp())[..., None] * k, upper=False, unitriangular=True
    )
    attn = (q @ k.transpose(-1, -2)) * decay
    q_decay = q * G.exp()[..., None]
    k_decay = k * (G[..., -1:] - G).exp()[..., None]
    chunk_decay = G[..., -1].exp()  # [B, H, N]

    h = starting_state(initial_state, q, v)
    outputs = []
    for n in range(q.shape[2]):
        u = u_tilde[:, :, n] - w[:, :, n] @ h
        outputs.append(q_decay[:, :, n] @ h + attn[:, :, n] @ u)
        h = h * chunk_decay[:, :, n, None, None] + k_decay[:, :, n].transpose(-1, -2) @ u
    return unchunked(outputs, T, out_dtype), h
