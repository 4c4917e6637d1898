"""Kimi Delta Attention in chunkwise (WY) form.

The Gated DeltaNet derivation (see ``kernels.gated_deltanet.chunk``) carries over with
a diagonal decay: G_i = Σ_{j≤i} g_j is now a vector per position, and every product
that crossed a scalar decay Γ_ij = e^{G_i − G_j} now sums over channels with the
channel's own decay:

    M_ij   = Σ_c k_ic k_jc e^{G_ic − G_jc}   (j < i)     the delta-rule system
    P_ij   = Σ_c q_ic k_jc e^{G_ic − G_jc}   (j ≤ i)     the intra-chunk attention

    (I + diag(β) M) U = diag(β) V − diag(β) (K ⊙ e^{G}) h₀
    O   = (Q ⊙ e^{G}) h₀ + P U
    h_C = Diag(e^{G_C}) h₀ + (K ⊙ e^{G_C − G})ᵀ U

Forming e^{G_ic − G_jc} for every pair would hold C²K numbers per chunk. Instead each
chunk is split into sub-chunks of S tokens: for j before i's sub-chunk, whose first
position is r, the decay factors as e^{G_ic − G_rc} · e^{G_rc − G_jc} (both ≤ 1), which
turns the sum over c into a matrix product; only the S×S blocks on the diagonal form
pairwise decays. Every exponent is a difference that is never positive, so nothing
overflows however strong the decay.
"""

from __future__ import annotations

import torch
from torch import Tensor

from kernels.gated_deltanet.chunk import chunked, starting_state, unchunked

__all__ = ["chunk_kda"]

_NEG_INF = float("-inf")


def _decayed_products(
    q: torch.Tensor, k: torch.Tensor, G: torch.Tensor, sub: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """M_ij = Σ_c k_ic k_jc e^{G_ic − G_jc} for j < i and P_ij = Σ_c q_ic k_jc e^{G_ic − G_jc}
    for j ≤ i (zero elsewhere), sharing the decay factors.

    q, k, G: [..., C, K] → (M, P), each [..., C, C]."""
    C, K = k.shape[-2:]
    ns = C // sub
    lead = k.shape[:-2]
    Gs = G.reshape(*lead, ns, sub, K)
    ref = Gs[..., 0, :]  # [..., ns, K]: G at each sub-chunk's first position
    inside = (Gs - ref[..., None, :]).exp()  # e^{G_i − G_r} ≤ 1
    before = (
        torch.arange(C, device=k.device)[None, :]
        < torch.arange(0, C, sub, device=k.device)[:, None]
    )  # [ns, C]: positions j before sub-chunk s
    span = ref[..., :, None, :] - G[..., None, :, :]  # [..., ns, C, K]: G_r − G_j
    k_right = k[..., None, :, :] * span.masked_fill(~before[..., None], _NEG_INF).exp()
    pair = Gs[..., :, None, :] - Gs[..., None, :, :]  # [..., ns, S, S, K]
    inclusive = torch.ones(sub, sub, dtype=torch.bool, device=k.device).tril()
    decay = pair.masked_fill(~inclusive[..., None], _NEG_INF).exp()
    ks = k.reshape(*lead, ns, sub, K)
    eye = torch.eye(ns, dtype=k.dtype, device=k.device)
    out = []
    for a, strict in ((k, True), (q, False)):
        a_sub = a.reshape(*lead, ns, sub, K)
        off = ((a_sub * inside) @ k_right.transpose(-1, -2)).reshape(*lead, C, C)
        diag = torch.einsum("...ic,...jc,...ijc->...ij", a_sub, ks, decay)
        if strict:
            diag = diag.masked_fill(torch.eye(sub, dtype=torch.bool, device=k.device), 0.0)
        blocks = torch.einsum("...sij,st->...sitj", diag, eye).reshape(*lead, C, C)
        out.append(off + blocks)
    return out[0], out[1]


def chunk_kda(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor, *, scale: float | None = None,
    initial_state: Tensor | None = None, chunk_size: int = 16, sub_chunk: int = 4,
) -> tuple[Tensor, Tensor]:
    """Same arguments and results as ``naive_recurrent_kda``."""
    if g.shape != q.shape or beta.shape != q.shape[:3]:
        raise ValueError(
            f"expected g like q [B, T, H, K] and beta [B, T, H]; got q {tuple(q.shape)}, "
            f"g {tuple(g.shape)}, beta {tuple(beta.shape)}"
        )
    if chunk_size % sub_chunk:
        raise ValueError(f"chunk_size {chunk_size} must be a multiple of sub_chunk {sub_chunk}")
    out_dtype, T, K = v.dtype, q.shape[1], q.shape[-1]
    scale = K**-0.5 if scale is None else scale
    q, k, v, g, beta = chunked(chunk_size, q, k, v, g, beta)  # [B, H, N, C, K|V] and [B, H, N, C]
    q = q * scale

    G = g.cumsum(-2)  # [B, H, N, C, K]
    M, attn = _decayed_products(q, k, G, sub_chunk)
    A = beta[..., None] * M
    u_tilde = torch.linalg.solve_triangular(A, beta[..., None] * v, upper=False, unitriangular=True)
    w = torch.linalg.solve_triangular(
        A, beta[..., None] * k * G.exp(), upper=False, unitriangular=True
    )
    q_decay = q * G.exp()
    k_decay = k * (G[..., -1:, :] - G).exp()
    chunk_decay = G[..., -1, :].exp()  # [B, H, N, K]

    h = starting_state(initial_state, q, v)
    outputs = []
    for n in range(q.shape[2]):
        u = u_tilde[:, :, n] - w[:, :, n] @ h
        outputs.append(q_decay[:, :, n] @ h + attn[:, :, n] @ u)
        h = h * chunk_decay[:, :, n, :, None] + k_decay[:, :, n].transpose(-1, -2) @ u  # channel-wise decay
    return unchunked(outputs, T, out_dtype), h
