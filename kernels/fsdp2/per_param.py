"""FSDP2: per-parameter sharding on dim 0 (a DTensor ``Shard(0)`` placement).

Every parameter is cut separately into N row blocks of ⌈rows/N⌉ rows (the last blocks
may be short or empty and are padded for the collectives), so each rank holds whole
rows of each parameter and no shard straddles two parameters. Unsharding all-gathers
each parameter's rows; its gradient is reduce-scattered to the same row blocks.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from kernels.fsdp1.model import adam_step, loss
from kernels.simulated import Ranks

__all__ = ["RowSharded", "fsdp2_train"]


class RowSharded:
    """One parameter split into N row blocks."""

    def __init__(self, shape: torch.Size, world: int) -> None:
        self.shape = shape
        self.world = world
        self.rows = shape[0]
        self.block = math.ceil(self.rows / world)

    def pad(self, t: torch.Tensor) -> torch.Tensor:
        extra = self.block * self.world - self.rows
        return F.pad(t, (0, 0) * (t.dim() - 1) + (0, extra))

    def shard(self, t: torch.Tensor) -> list[torch.Tensor]:
        return [c.clone() for c in self.pad(t).chunk(self.world)]

    def local_rows(self, rank: int) -> int:
        return max(0, min(self.block, self.rows - rank * self.block))

    def unshard(self, gathered: torch.Tensor) -> torch.Tensor:
        return gathered[: self.rows]


def fsdp2_train(
    start: list[torch.Tensor], batches: list[list[torch.Tensor]], world: int
) -> tuple[list[torch.Tensor], list[RowSharded], list[list[torch.Tensor]]]:
    """Returns the trained parameters, the layouts and the last step's gradient shards
    ([parameter][rank])."""
    layouts = [RowSharded(p.shape, world) for p in start]
    comm = Ranks(world)
    shards = [lay.shard(p) for lay, p in zip(layouts, start, strict=True)]  # [param][rank]
    moments = [[(torch.zeros_like(s), torch.zeros_like(s)) for s in row] for row in shards]
    grad_shards: list[list[torch.Tensor]] = []
    for step, per_rank in enumerate(batches, start=1):
        gathered = [comm.all_gather(row) for row in shards]  # [param][rank] full copies
        local = []
        for r, x in enumerate(per_rank):
            leaves = [
                lay.unshard(g[r]).clone().requires_grad_()
                for lay, g in zip(layouts, gathered, strict=True)
            ]
            local.append(torch.autograd.grad(loss(leaves, x), leaves))
        grad_shards = []
        for i, lay in enumerate(layouts):
            reduced = comm.reduce_scatter([lay.pad(local[r][i]) for r in range(world)])
            grad_shards.append([g / world for g in reduced])
        for row, mom, grads in zip(shards, moments, grad_shards, strict=True):
            for shard, (m, v), g in zip(row, mom, grads, strict=True):
                adam_step(shard, m, v, g, step)
    params = [lay.unshard(torch.cat(row)) for lay, row in zip(layouts, shards, strict=True)]
    return params, layouts, grad_shards
