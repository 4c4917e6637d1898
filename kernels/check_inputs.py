"""Inputs that the declared checks of several kernels draw alike.

- the linear-attention family (DeltaNet, Gated DeltaNet, KDA, Mamba2): FLA-style q, k,
  v, gates, β and an initial state, and cotangents for the output and final state;
- token-choice MoE routing (Switch, Expert Choice): tokens, a router and experts.

Every draw comes from ``s.generator(offset)``, so a check's numbers depend only on its
setting and offset.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from kernels.checks import Setting
from kernels.experts import Experts, init_experts

__all__ = ["Recurrence", "linear_attention_inputs", "routed_tokens", "state_cotangents"]

#: A form of a linear-attention recurrence: (q, k, v, …, h₀) → (o, h_T).
Recurrence = Callable[..., tuple[torch.Tensor, torch.Tensor]]


def linear_attention_inputs(
    s: Setting, B: int, T: int, H: int, D: int, *, channel_gates: bool = False, offset: int = 0
) -> dict[str, torch.Tensor]:
    """FLA-style inputs: L2-normalised k, g = logsigmoid(·), β = sigmoid(·), a random h₀.

    The gates are one per head, or one per channel with ``channel_gates`` (KDA)."""
    gen = s.generator(offset)
    g_shape = (B, T, H, D) if channel_gates else (B, T, H)
    return {
        "q": s.randn(B, T, H, D, gen=gen),
        "k": F.normalize(s.randn(B, T, H, D, gen=gen), dim=-1),
        "v": s.randn(B, T, H, D, gen=gen),
        "g": F.logsigmoid(s.randn(*g_shape, gen=gen)),
        "beta": s.rand(B, T, H, gen=gen).sigmoid(),
        "h0": s.randn(B, H, D, D, gen=gen, scale=0.5),
    }


def state_cotangents(
    s: Setting, B: int, T: int, H: int, D: int, *, offset: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cotangents for a recurrence's two outputs: o [B, T, H, D] and h_T [B, H, D, D]."""
    gen = s.generator(offset)
    return s.randn(B, T, H, D, gen=gen), s.randn(B, H, D, D, gen=gen)


def routed_tokens(
    s: Setting, tokens: int, d: int, experts: int, *, offset: int
) -> tuple[torch.Tensor, torch.Tensor, Experts]:
    """Tokens [tokens, d], a router [experts, d] and SwiGLU experts of width 2·d."""
    gen = s.generator(offset)
    return (
        s.randn(tokens, d, gen=gen),
        s.randn(experts, d, gen=gen),
        init_experts(experts, d, 2 * d, gen, s.device, s.dtype),
    )
