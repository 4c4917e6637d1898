"""``situ_and_mul``: SiTU-GLU as one function with a hand-written backward.

The input holds the gate and up projections side by side ([..., 2d], as a fused
gate-up projection produces them). Forward and backward compute in float32 whatever
the input dtype and save only the input; the backward recomputes what it needs:

    f(g) = β tanh(g/β) σ(g)       f′(g) = sech²(g/β) σ(g) + β tanh(g/β) σ(g)(1 − σ(g))
    h(u) = β_l tanh(u/β_l)        h′(u) = sech²(u/β_l)
"""

from __future__ import annotations

from typing import Any

import torch

from kernels.situ.naive import BETA, BETA_LINEAR

__all__ = ["situ_and_mul"]


class _SiTUAndMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, beta: float, beta_linear: float) -> torch.Tensor:
        ctx.save_for_backward(x)
        ctx.betas = (beta, beta_linear)
        g, u = x.float().chunk(2, dim=-1)
        tg, tu = torch.tanh(g / beta), torch.tanh(u / beta_linear)
        return (beta * tg * torch.sigmoid(g) * (beta_linear * tu)).to(x.dtype)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        (x,) = ctx.saved_tensors
        beta, beta_linear = ctx.betas
        g, u = x.float().chunk(2, dim=-1)
        do = grad.float()
        tg, tu, sg = torch.tanh(g / beta), torch.tanh(u / beta_linear), torch.sigmoid(g)
        f = beta * tg * sg
        h = beta_linear * tu
        df = (1 - tg * tg) * sg + beta * tg * sg * (1 - sg)
        dh = 1 - tu * tu
        return torch.cat([do * h * df, do * f * dh], dim=-1).to(x.dtype), None, None


def situ_and_mul(
    x: torch.Tensor, beta: float = BETA, beta_linear: float = BETA_LINEAR
) -> torch.Tensor:
    """x [..., 2d] = [gate | up] → SiTU(gate, up) [..., d]."""
    if x.shape[-1] % 2:
        raise ValueError(f"the last dimension holds gate and up halves; {x.shape[-1]} is odd")
    out: torch.Tensor = _SiTUAndMul.apply(x, beta, beta_linear)  # type: ignore[no-untyped-call]
    return out
