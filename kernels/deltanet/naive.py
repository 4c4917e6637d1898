"""DeltaNet, the obvious way: the ungated delta rule, one token at a time, in float32.

    v′ = β_t (v_t − hᵀ k_t);   h ← h + k_t v′ᵀ;   o_t = hᵀ (scale · q_t)

Written on its own (not by calling Gated DeltaNet with α = 1) so that the reduction
Gated DeltaNet → DeltaNet is checked against an independent loop.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["naive_recurrent_delta_rule"]


def naive_recurrent_delta_rule(
    q: Tensor, k: Tensor, v: Tensor, beta: Tensor, *, scale: float | None = None,
    initial_state: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """q, k: [B, T, H, K]; v: [B, T, H, V]; beta: [B, T, H]; state [B, H, K, V]."""
    B, T, H, K = q.shape
    scale = K**-0.5 if scale is None else scale
    zero = torch.zeros(K, v.shape[-1], device=q.device)
    state = [[zero if initial_state is None else initial_state[b, n].float() for n in range(H)] for b in range(B)]
    o: list[list[list[torch.Tensor]]] = [[[] for _ in range(H)] for _ in range(B)]
    for t in range(T):
        for b in range(B):
            for n in range(H):
                kt, vt, h = k[b, t, n].float(), v[b, t, n].float(), state[b][n]
                h = h + torch.outer(kt, beta[b, t, n].float() * (vt - h.T @ kt))
                state[b][n] = h
                o[b][n].append(h.T @ (q[b, t, n].float() * scale))
    out = torch.stack([torch.stack([torch.stack(o[b][n]) for n in range(H)], dim=1) for b in range(B)])
    final = torch.stack([torch.stack(state[b]) for b in range(B)])
    return out.to(v.dtype), final
