"""Attention Residuals, the obvious way: a layer's input is a softmax-weighted mix of
the earlier representations ("sources"), taken over depth, one source at a time.

For a layer with pseudo-query w (a learned vector) and sources v_0 … v_{n−1}:
    logit_i = w · RMSNorm(v_i),   α = softmax_i(logit),   input = Σ_i α_i v_i
computed independently for every token.
"""

from __future__ import annotations

import torch

__all__ = ["naive_attnres"]


def naive_attnres(
    sources: list[torch.Tensor], query: torch.Tensor, norm: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    """sources: n tensors [B, T, d]; query, norm: [d] → [B, T, d]."""
    logits = []
    for v in sources:
        key = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps) * norm
        logits.append((key * query).sum(-1))
    top = torch.stack(logits).max(0).values
    weights = [(logit - top).exp() for logit in logits]
    total = sum(weights)
    out = torch.zeros_like(sources[0])
    for w, v in zip(weights, sources, strict=True):
        out = out + (w / total)[..., None] * v
    return out
