"""FSDP1: flat-parameter sharding.

All parameters of a unit are flattened and concatenated into one vector, padded to a
multiple of N, and cut element-wise into N equal shards; a shard boundary may fall in
the middle of a row, or of a parameter. Unsharding all-gathers the shards, drops the
padding and views the parameters back out; gradients are flattened the same way and
reduce-scattered, so each rank holds the slice of the mean gradient that matches its
parameter shard, and updates only that.
"""

from __future__ import annotations

import math

import torch

from kernels.fsdp1.model import adam_step, loss
from kernels.simulated import Ranks

__all__ = ["FlatParam", "fsdp1_train"]


class FlatParam:
    def __init__(self, params: list[torch.Tensor], world: int) -> None:
        self.shapes = [p.shape for p in params]
        self.numels = [p.numel() for p in params]
        self.numel = sum(self.numels)
        self.world = world
        self.shard_size = math.ceil(self.numel / world)

    def flatten(self, tensors: list[torch.Tensor]) -> torch.Tensor:
        flat = torch.cat([t.reshape(-1) for t in tensors])
        return torch.nn.functional.pad(flat, (0, self.shard_size * self.world - self.numel))

    def shard(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        return [s.clone() for s in self.flatten(tensors).chunk(self.world)]

    def unshard(self, gathered: torch.Tensor) -> list[torch.Tensor]:
        views = torch.split(gathered[: self.numel], self.numels)
        return [v.view(shape) for v, shape in zip(views, self.shapes, strict=True)]

    def rows_cut(self) -> int:
        """How many parameter rows a shard boundary cuts in two."""
        cut = 0
        start = 0
        for shape, n in zip(self.shapes, self.numels, strict=True):
            row = int(math.prod(shape[1:])) if len(shape) > 1 else n
            for b in range(self.shard_size, self.numel, self.shard_size):
                if start < b < start + n and (b - start) % row:
                    cut += 1
            start += n
        return cut


def fsdp1_train(
    start: list[torch.Tensor], batches: list[list[torch.Tensor]], world: int
) -> tuple[list[torch.Tensor], FlatParam, list[torch.Tensor]]:
    """Returns the trained (unsharded) parameters, the flat layout and the last step's
    gradient shards."""
    flat = FlatParam(start, world)
    comm = Ranks(world)
    shards = flat.shard(start)
    moments = [(torch.zeros_like(s), torch.zeros_like(s)) for s in shards]
    grad_shards: list[torch.Tensor] = []
    for step, per_rank in enumerate(batches, start=1):
        full = comm.all_gather(shards)
        local = []
        for gathered, x in zip(full, per_rank, strict=True):
            leaves = [p.clone().requires_grad_() for p in flat.unshard(gathered)]
            local.append(flat.flatten(list(torch.autograd.grad(loss(leaves, x), leaves))))
        grad_shards = [g / world for g in comm.reduce_scatter(local)]
        for shard, (m, v), g in zip(shards, moments, grad_shards, strict=True):
            adam_step(shard, m, v, g, step)
    return flat.unshard(torch.cat(shards)), flat, grad_shards
