"""DeltaNet, the obvious way: the ungated delta rule, one token at a time, in float32.

    v′ = β_t (v_t − hᵀ k_t);   h ← h + k_t v′ᵀ;   o_t = hᵀ (scale · q_t)

Written on its own (not by calling Gated DeltaNet with α = 1) so that the reduction
Gated DeltaNet → DeltaNet is checked against an independent loop.
"""

from __future__ import annotations

import torch

__all__ = ["naive_recurrent_delta_rule"]


def naive_recurrent_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """q, k: [B, T, H, K]; v: [B, T, H, V]; beta: [B, T, H]; state [B, H, K, V]."""
    out_dtype = v.dtype
    q, k, v, beta = (x.float() for x in (q, k, v, beta))
    B, T, H, K = q.shape
    V = v.shape[-1]
    scale = K**-0.5 if scale is None else scale
    h0 = q.new_zeros(B, H, K, V) if initial_state is None else initial_state.float()
    state = [[h0[b, n] for n in range(H)] for b in range(B)]
    o: list[list[list[torch.Tensor]]] = [[[] for _ in range(H)] for _ in range(B)]
    for t in range(T):
        for b in range(B):
            for n in range(H):
                kt, vt, h = k[b, t, n], v[b, t, n], state[b][n]
                h = h + torch.outer(kt, beta[b, t, n] * (vt - h.T @ kt))
                state[b][n] = h
                o[b][n].append(h.T @ (q[b, t, n] * scale))
    out = torch.stack([torch.stack([torch.stack(o[b][n]) for n in range(H)], dim=1) for b in range(B)])
    final = torch.stack([torch.stack(state[b]) for b in range(B)])
    return out.to(out_dtype), final
