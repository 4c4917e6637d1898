"""Plain data parallelism (DDP), one rank's code: every rank keeps everything (bf16
parameters and gradients, fp32 master weights and both Adam moments), all-reduces the
gradient and applies the same full update: 16Ψ bytes per rank.

Written without the sharded form's helpers: the gradient takes the two layers as
separate leaves, and the update is Kingma & Ba's Adam from :mod:`kernels.formulas`.
``ddp_rank`` is SPMD code over a :class:`kernels.simulated.Comm`: simulated ranks run it
in threads, gloo processes run it unchanged. The rank's tensors are counted after every
assignment (:class:`kernels.memory.Tracked`), so ``peak`` is its most bytes held at once.
"""

from __future__ import annotations

import torch

from kernels.formulas import adam
from kernels.memory import Tracked
from kernels.simulated import Comm, simulate
from kernels.zero.model import MLPShape

__all__ = ["DDPRank", "ddp_rank", "ddp_train"]

Batches = list[list[tuple[torch.Tensor, torch.Tensor]]]


class DDPRank(Tracked):
    def __init__(self, start: torch.Tensor) -> None:
        self.params16 = start.to(torch.bfloat16)
        self.grad16 = torch.zeros_like(self.params16)
        self.master = start.float().clone()
        self.m = torch.zeros_like(self.master)
        self.v = torch.zeros_like(self.master)
        #: Elements this rank sent.
        self.sent = 0


def _gradient(params16: torch.Tensor, shape: MLPShape, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """d/dθ mean((tanh(x W1ᵀ) W2ᵀ − y)²) at the bf16 parameters, in float32, flattened."""
    split = shape.h * shape.d
    w1 = params16[:split].float().view(shape.h, shape.d).requires_grad_()
    w2 = params16[split:].float().view(shape.out, shape.h).requires_grad_()
    loss = ((torch.tanh(x @ w1.T) @ w2.T - y) ** 2).mean()
    return torch.cat([g.flatten() for g in torch.autograd.grad(loss, (w1, w2))])


def ddp_rank(comm: Comm, start: torch.Tensor, shape: MLPShape, batches: Batches) -> DDPRank:
    """Train rank ``comm.rank`` on its microbatches ``batches[step][rank]``."""
    r = DDPRank(start)
    for step, per_rank in enumerate(batches, start=1):
        x, y = per_rank[comm.rank]
        r.grad16 = _gradient(r.params16, shape, x, y).to(torch.bfloat16)
        summed = comm.all_reduce(r.grad16.float())
        r.master, r.m, r.v = adam(r.master, r.m, r.v, summed / comm.world, step)
        r.params16 = r.master.to(torch.bfloat16)
    r.sent = comm.sent
    return r


def ddp_train(start: torch.Tensor, shape: MLPShape, batches: Batches, world: int) -> list[DDPRank]:
    """DDP on ``world`` simulated ranks."""
    ranks: list[DDPRank] = simulate(world, ddp_rank, start, shape, batches)
    return ranks
