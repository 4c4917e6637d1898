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
    Mutant(
        "row-block-rounded-down",
        "the row block is ⌊R/N⌋ instead of ⌈R/N⌉, so a parameter whose rows do not divide loses rows",
        f"{_P}:RowSharded.__init__",
        "self.block = math.ceil(self.rows / world)",
        "self.block = self.rows // world",
        "whole-rows",
        kind="expected-value",
    ),
    Mutant(
        "empty-block-negative",
        "a rank past the last row is told it holds R − r·⌈R/N⌉ rows, a negative count, instead of none",
        f"{_P}:RowSharded.local_rows",
        "return max(0, min(self.block, self.rows - rank * self.block))",
        "return min(self.block, self.rows - rank * self.block)",
        "whole-rows",
        kind="adversarial-input",
    ),
)
