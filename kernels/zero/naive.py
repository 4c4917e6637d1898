"""Plain data parallelism (DDP), one rank's code: every rank keeps everything (bf16
parameters and gradients, fp32 master weights and both Adam moments), all-reduces the
gradient and applies the same full update: 16Ψ bytes per rank.

``ddp_rank`` is SPMD code over a :class:`kernels.simulated.Comm`: simulated ranks run it
in threads, gloo processes run it unchanged."""

from __future__ import annotations

import torch

from kernels.simulated import Comm, simulate
from kernels.zero.model import MLPShape, adam_update, local_grad

__all__ = ["DDPRank", "ddp_rank", "ddp_train"]

Batches = list[list[tuple[torch.Tensor, torch.Tensor]]]


class DDPRank:
    def __init__(self, start: torch.Tensor) -> None:
        self.params16 = start.to(torch.bfloat16)
        self.grad16 = torch.zeros_like(self.params16)
        self.master = start.float().clone()
        self.m = torch.zeros_like(self.master)
        self.v = torch.zeros_like(self.master)
        #: Elements this rank sent.
        self.sent = 0

    def held(self) -> dict[str, torch.Tensor]:
        return {
            "params16": self.params16,
            "grad16": self.grad16,
            "master": self.master,
            "m": self.m,
            "v": self.v,
        }


def ddp_rank(comm: Comm, start: torch.Tensor, shape: MLPShape, batches: Batches) -> DDPRank:
    """Train rank ``comm.rank`` on its microbatches ``batches[step][rank]``."""
    r = DDPRank(start)
    for step, per_rank in enumerate(batches, start=1):
        x, y = per_rank[comm.rank]
        r.grad16 = local_grad(r.params16, shape, x, y).to(torch.bfloat16)
        summed = comm.all_reduce(r.grad16.float())
        adam_update(r.master, r.m, r.v, summed / comm.world, step)
        r.params16 = r.master.to(torch.bfloat16)
    r.sent = comm.sent
    return r


def ddp_train(start: torch.Tensor, shape: MLPShape, batches: Batches, world: int) -> list[DDPRank]:
    """DDP on ``world`` simulated ranks."""
    ranks: list[DDPRank] = simulate(world, ddp_rank, start, shape, batches)
    return ranks
