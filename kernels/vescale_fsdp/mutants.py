"""Bugs a person makes in a RaggedShard placement."""

from __future__ import annotations

from kernels.mutation import Mutant

_R = "kernels.vescale_fsdp.ragged:RaggedShard"

MUTANTS = (
    Mutant(
        "units-as-elements",
        "a rank's slice is local_units elements long instead of local_units × unit",
        f"{_R}.bounds",
        "stop = start + units * self.unit",
        "stop = start + units",
        "sizes-and-round-trip",
    ),
    Mutant(
        "gather-in-reverse",
        "the all-gather concatenates the shards in reverse rank order",
        f"{_R}.replicate",
        "return torch.cat(shards).view(shape)",
        "return torch.cat(shards[::-1]).view(shape)",
        "sizes-and-round-trip",
    ),
    Mutant(
        "shards-alias-the-tensor",
        "the shards are views of the replicated tensor, not copies, so an optimizer step on "
        "one layout writes into the tensor the next one shards",
        f"{_R}.shard",
        "return [flat[a:b].clone() for a, b in self.bounds(flat.numel())]",
        "return [flat[a:b] for a, b in self.bounds(flat.numel())]",
        "sharded-step",
    ),
    Mutant(
        "unit-rounded-to-half",
        "slices are rounded to half a unit, so a boundary can fall inside a block or a matrix",
        f"{_R}.bounds",
        "out.append((start, stop))",
        "stop = stop - (self.unit // 2 if units and stop < numel else 0)\n        out.append((start, stop))",
        "muon-matrices-stay-whole",
    ),
)
