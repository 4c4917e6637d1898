"""The tensor-parallel MLP over real processes: torch.distributed (gloo) carries the
f/g all-reduces. Each rank returns its errors against the unsharded MLP it computes
itself from the same seed."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from kernels.megatron_tp.naive import mlp

__all__ = ["tp_rank"]


class _F(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.clone()
        dist.all_reduce(grad)
        return grad


class _G(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, partial: torch.Tensor) -> torch.Tensor:
        out = partial.clone()
        dist.all_reduce(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad


def tp_rank(rank: int, world: int, seed: int, T: int, d: int, h: int) -> dict[str, float]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(T, d, generator=gen)
    a = torch.randn(h, d, generator=gen) * d**-0.5
    b = torch.randn(d, h, generator=gen) * h**-0.5
    bias = torch.randn(d, generator=gen)
    cot = torch.randn(T, d, generator=gen)
    # The unsharded reference, on every rank.
    leaves = [t.clone().requires_grad_() for t in (x, a, b)]
    ref = mlp(leaves[0], leaves[1], leaves[2], bias)
    ref_grads = torch.autograd.grad((ref * cot).sum(), leaves)
    # This rank's shard.
    xr = x.clone().requires_grad_()
    ar = a.chunk(world, 0)[rank].clone().requires_grad_()
    br = b.chunk(world, 1)[rank].clone().requires_grad_()
    out = _G.apply(F.gelu(_F.apply(xr) @ ar.T) @ br.T) + bias  # type: ignore[no-untyped-call]
    dx, da, db = torch.autograd.grad((out * cot).sum(), (xr, ar, br))
    return {
        "out": (out - ref).abs().max().item(),
        "dx": (dx - ref_grads[0]).abs().max().item(),
        "dA shard": (da - ref_grads[1].chunk(world, 0)[rank]).abs().max().item(),
        "dB shard": (db - ref_grads[2].chunk(world, 1)[rank]).abs().max().item(),
        "scale": ref.abs().max().item(),
    }
