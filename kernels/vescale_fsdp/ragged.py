"""veScale-FSDP's RaggedShard placement: uneven shards of contiguous memory.

A tensor is viewed as a sequence of units of ``unit`` consecutive elements (a row, or a
block of a blockwise quantiser), and rank r holds ``local_units[r]`` consecutive units,
any number, zero included. Shards are contiguous slices of the flat tensor, sized in
proportion to the units, and a unit never straddles two ranks, so a computation that
works unit by unit (such as a block's quantisation scale) runs locally, without
communication. Equal units give FSDP1's even element-wise shards.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["RaggedShard"]


@dataclass(frozen=True)
class RaggedShard:
    local_units: tuple[int, ...]
    unit: int

    @property
    def world(self) -> int:
        return len(self.local_units)

    def bounds(self, numel: int) -> list[tuple[int, int]]:
        if numel != sum(self.local_units) * self.unit:
            raise ValueError(f"a tensor of {numel} elements is not {sum(self.local_units)} units of {self.unit}")
        out, start = [], 0
        for units in self.local_units:
            stop = start + units * self.unit
            out.append((start, stop))
            start = stop
        return out

    def shard(self, t: torch.Tensor) -> list[torch.Tensor]:
        flat = t.reshape(-1)
        return [flat[a:b].clone() for a, b in self.bounds(flat.numel())]

    def replicate(self, shards: list[torch.Tensor], shape: torch.Size) -> torch.Tensor:
        """Ragged → Replicate: the all-gather of uneven shards."""
        return torch.cat(shards).view(shape)
