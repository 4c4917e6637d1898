"""Plain data parallelism (DDP) on simulated ranks: every rank keeps everything (bf16
parameters and gradients, fp32 master weights and both Adam moments), all-reduces the
gradient and applies the same full update: 16Ψ bytes per rank."""

from __future__ import annotations

import torch

from kernels.simulated import Ranks
from kernels.zero.model import MLPShape, adam_update, local_grad

__all__ = ["DDPRank", "ddp_train"]


class DDPRank:
    def __init__(self, start: torch.Tensor) -> None:
        self.params16 = start.to(torch.bfloat16)
        self.grad16 = torch.zeros_like(self.params16)
        self.master = start.float().clone()
        self.m = torch.zeros_like(self.master)
        self.v = torch.zeros_like(self.master)

    def held(self) -> dict[str, torch.Tensor]:
        return {
            "params16": self.params16,
            "grad16": self.grad16,
            "master": self.master,
            "m": self.m,
            "v": self.v,
        }


def ddp_train(
    start: torch.Tensor, shape: MLPShape, batches: list[list[tuple[torch.Tensor, torch.Tensor]]], world: int
) -> tuple[list[DDPRank], Ranks]:
    ranks = [DDPRank(start) for _ in range(world)]
    comm = Ranks(world)
    for step, per_rank in enumerate(batches, start=1):
        for r, (x, y) in zip(ranks, per_rank, strict=True):
            r.grad16 = local_grad(r.params16, shape, x, y).to(torch.bfloat16)
        summed = comm.all_reduce([r.grad16.float() for r in ranks])
        for r, g in zip(ranks, summed, strict=True):
            adam_update(r.master, r.m, r.v, g / world, step)
            r.params16 = r.master.to(torch.bfloat16)
    return ranks, comm
