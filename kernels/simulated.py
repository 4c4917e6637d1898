"""Collectives over simulated ranks: each rank's tensor is an item of a list.

They do what torch.distributed's collectives do, in one process and deterministically
(sums always run in rank order), and they count the elements each rank sends, with the
usual ring costs: an all-reduce of n elements costs 2n (a reduce-scatter and an
all-gather), a reduce-scatter or an all-gather of a full size n costs n.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Ranks"]


@dataclass
class Ranks:
    world: int
    sent: int = 0  # elements communicated per rank so far

    def all_reduce(self, per_rank: list[torch.Tensor]) -> list[torch.Tensor]:
        total = per_rank[0]
        for t in per_rank[1:]:
            total = total + t
        self.sent += 2 * total.numel()
        return [total.clone() for _ in range(self.world)]

    def reduce_scatter(self, per_rank: list[torch.Tensor]) -> list[torch.Tensor]:
        """Sum full tensors (dim 0 divisible by the world) and give rank r the r-th slice."""
        total = per_rank[0]
        for t in per_rank[1:]:
            total = total + t
        self.sent += total.numel()
        return [c.clone() for c in total.chunk(self.world)]

    def all_gather(self, shards: list[torch.Tensor]) -> list[torch.Tensor]:
        full = torch.cat(shards)
        self.sent += full.numel()
        return [full.clone() for _ in range(self.world)]
