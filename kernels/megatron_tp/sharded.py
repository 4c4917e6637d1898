"""Megatron tensor parallelism, one rank's code.

The first layer is column-parallel: rank r holds rows A_r of A (a slice of the hidden
units) and computes GeLU(X A_rᵀ) with no communication. The second layer is
row-parallel: rank r holds the matching columns B_r of B and computes a partial
output Z_r B_rᵀ; the partials are summed by an all-reduce, and the bias is added once.

The two conjugate operators make the backward right:
- f: identity forward, all-reduce backward (each rank's gradient of X is partial);
- g: all-reduce forward, identity backward.
``column_linear`` and ``row_linear`` are the two halves on their own (the column half
gathers its output along the last dimension).

Everything here is SPMD code over a :class:`kernels.simulated.Comm`: simulated ranks
run it in threads, and gloo processes run the same functions (``tp_rank``,
``linear_rank``).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from kernels.simulated import Comm

__all__ = ["column_linear", "linear_rank", "row_linear", "shard_mlp", "tp_mlp", "tp_rank"]


class _F(torch.autograd.Function):
    """Copy X to this rank; all-reduce the ranks' gradients on the way back."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, comm: Comm) -> torch.Tensor:
        ctx.comm = comm
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return ctx.comm.all_reduce(grad), None


class _G(torch.autograd.Function):
    """All-reduce the ranks' partial outputs; each rank receives the output gradient unchanged."""

    @staticmethod
    def forward(ctx: Any, partial: torch.Tensor, comm: Comm) -> torch.Tensor:
        ctx.comm = comm
        return comm.all_reduce(partial)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad, None


class _GatherLast(torch.autograd.Function):
    """All-gather along the last dimension; the backward keeps this rank's slice."""

    @staticmethod
    def forward(ctx: Any, y: torch.Tensor, comm: Comm) -> torch.Tensor:
        ctx.comm = comm
        return comm.all_gather(y.movedim(-1, 0).contiguous()).movedim(0, -1)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad.chunk(ctx.comm.world, dim=-1)[ctx.comm.rank].contiguous(), None


def shard_mlp(a: torch.Tensor, b: torch.Tensor, world: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Split A by rows and B by columns into ``world`` matching slices of the hidden units."""
    return list(a.chunk(world, dim=0)), list(b.chunk(world, dim=1))


def tp_mlp(
    comm: Comm, x: torch.Tensor, a_shard: torch.Tensor, b_shard: torch.Tensor, bias: torch.Tensor
) -> torch.Tensor:
    """This rank's column → GeLU → row MLP; every rank gets the full output."""
    partial = F.gelu(_F.apply(x, comm) @ a_shard.T) @ b_shard.T  # type: ignore[no-untyped-call]
    out: torch.Tensor = _G.apply(partial, comm) + bias  # type: ignore[no-untyped-call]
    return out


def column_linear(comm: Comm, x: torch.Tensor, w_shard: torch.Tensor) -> torch.Tensor:
    """Y = X Wᵀ with W split by output rows; the outputs are gathered (concatenated)."""
    local = _F.apply(x, comm) @ w_shard.T  # type: ignore[no-untyped-call]
    out: torch.Tensor = _GatherLast.apply(local, comm)  # type: ignore[no-untyped-call]
    return out


def row_linear(comm: Comm, x: torch.Tensor, w_shard: torch.Tensor) -> torch.Tensor:
    """Y = X Wᵀ with W split by input columns and X split to match; partials all-reduced."""
    local = x.chunk(comm.world, dim=-1)[comm.rank] @ w_shard.T
    out: torch.Tensor = _G.apply(local, comm)  # type: ignore[no-untyped-call]
    return out


def _leaf(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone().requires_grad_()


def tp_rank(
    comm: Comm, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor, cot: torch.Tensor
) -> dict[str, torch.Tensor]:
    """Forward and backward (cotangent ``cot``) of the MLP on this rank's shards of the
    full weights ``a``, ``b``: its output, input gradient and weight-shard gradients."""
    a_shards, b_shards = shard_mlp(a, b, comm.world)
    xr, ar, br = _leaf(x), _leaf(a_shards[comm.rank]), _leaf(b_shards[comm.rank])
    out = tp_mlp(comm, xr, ar, br, bias)
    dx, da, db = torch.autograd.grad((out * cot).sum(), (xr, ar, br))
    return {"out": out.detach(), "dx": dx, "dA": da, "dB": db}


def linear_rank(
    comm: Comm,
    x: torch.Tensor,
    a: torch.Tensor,
    cot_h: torch.Tensor,
    h_in: torch.Tensor,
    b: torch.Tensor,
    cot_d: torch.Tensor,
) -> dict[str, torch.Tensor]:
    """The column-parallel half (X Aᵀ, gathered) and the row-parallel half (H Bᵀ) on this
    rank's shards, with their gradients."""
    xr, ar = _leaf(x), _leaf(a.chunk(comm.world, 0)[comm.rank])
    col = column_linear(comm, xr, ar)
    dxc, dac = torch.autograd.grad((col * cot_h).sum(), (xr, ar))
    hr, br = _leaf(h_in), _leaf(b.chunk(comm.world, 1)[comm.rank])
    row = row_linear(comm, hr, br)
    dxr, dbr = torch.autograd.grad((row * cot_d).sum(), (hr, br))
    return {
        "column": col.detach(),
        "column dx": dxc,
        "column dW": dac,
        "row": row.detach(),
        "row dx": dxr,
        "row dW": dbr,
    }
