"""Bugs a person makes in FSDP2's per-parameter row sharding."""

from __future__ import annotations

from kernels.mutation import Mutant

_P = "kernels.fsdp2.per_param"

MUTANTS = (
    Mutant(
        "summed-not-averaged",
        "the reduce-scattered row blocks are the sum over ranks, not the mean",
        f"{_P}:fsdp2_train",
        "grad_shards.append([g / world for g in reduced])",
        "grad_shards.append(reduced)",
        "grad-shard-is-row-block",
    ),
    Mutant(
        "padding-rows-kept",
        "unsharding keeps the last rows of the padded gather instead of the first",
        f"{_P}:RowSharded.unshard",
        "gathered[: self.rows]",
        "gathered[-self.rows :]",
        "fsdp2-vs-fsdp1",
    ),
    Mutant(
        "adam-step-from-zero",
        "off-by-one in the step counter: Adam's bias correction starts at step 0",
        f"{_P}:fsdp2_train",
        "for step, per_rank in enumerate(batches, start=1):",
        "for step, per_rank in enumerate(batches):",
        "fsdp2-vs-fsdp1",
    ),
)
