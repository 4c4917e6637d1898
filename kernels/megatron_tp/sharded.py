"""Megatron tensor parallelism on simulated ranks.

The first layer is column-parallel: rank r holds rows A_r of A (a slice of the hidden
units) and computes GeLU(X A_rᵀ) with no communication. The second layer is
row-parallel: rank r holds the matching columns B_r of B and computes a partial
output Z_r B_rᵀ; the partials are summed by an all-reduce, and the bias is added once.

The two conjugate operators make the backward right:
- f: identity forward, all-reduce backward (each rank's gradient of X is partial);
- g: all-reduce forward, identity backward.
``column_linear`` and ``row_linear`` are the two halves on their own.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

__all__ = ["column_linear", "row_linear", "shard_mlp", "tp_mlp"]


class _F(torch.autograd.Function):
    """Copy X to every rank; sum the ranks' gradients on the way back."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, world: int) -> tuple[torch.Tensor, ...]:
        return tuple(x.clone() for _ in range(world))

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor, None]:
        total = grads[0]
        for g in grads[1:]:
            total = total + g
        return total, None


class _G(torch.autograd.Function):
    """Sum the ranks' partial outputs; every rank receives the output gradient unchanged."""

    @staticmethod
    def forward(ctx: Any, *partials: torch.Tensor) -> torch.Tensor:
        ctx.world = len(partials)
        total = partials[0]
        for p in partials[1:]:
            total = total + p
        return total

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(grad for _ in range(ctx.world))


def shard_mlp(
    a: torch.Tensor, b: torch.Tensor, world: int
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Split A by rows and B by columns into ``world`` matching slices of the hidden units."""
    return list(a.chunk(world, dim=0)), list(b.chunk(world, dim=1))


def tp_mlp(
    x: torch.Tensor, a_shards: list[torch.Tensor], b_shards: list[torch.Tensor], bias: torch.Tensor
) -> torch.Tensor:
    copies = _F.apply(x, len(a_shards))  # type: ignore[no-untyped-call]
    partials = [
        F.gelu(xr @ ar.T) @ br.T for xr, ar, br in zip(copies, a_shards, b_shards, strict=True)
    ]
    out: torch.Tensor = _G.apply(*partials) + bias  # type: ignore[no-untyped-call]
    return out


def column_linear(x: torch.Tensor, shards: list[torch.Tensor]) -> torch.Tensor:
    """Y = X Wᵀ with W split by output rows; the outputs are gathered (concatenated)."""
    copies = _F.apply(x, len(shards))  # type: ignore[no-untyped-call]
    return torch.cat([xr @ wr.T for xr, wr in zip(copies, shards, strict=True)], dim=-1)


def row_linear(x: torch.Tensor, shards: list[torch.Tensor]) -> torch.Tensor:
    """Y = X Wᵀ with W split by input columns and X split to match; partials all-reduced."""
    xs = x.chunk(len(shards), dim=-1)
    partials = [xr @ wr.T for xr, wr in zip(xs, shards, strict=True)]
    out: torch.Tensor = _G.apply(*partials)  # type: ignore[no-untyped-call]
    return out
