"""Bugs a person makes in FSDP1's flat-parameter sharding."""

from __future__ import annotations

from kernels.mutation import Mutant

_F = "kernels.fsdp1.flat"

MUTANTS = (
    Mutant(
        "summed-not-averaged",
        "the reduce-scattered gradient is the sum over ranks, not the mean",
        f"{_F}:fsdp1_train",
        "grad_shards = [g / world for g in comm.reduce_scatter(local)]",
        "grad_shards = comm.reduce_scatter(local)",
        "grad-shard-is-slice",
    ),
    Mutant(
        "padding-dropped-from-the-front",
        "unsharding drops numel elements from the end instead of the padding",
        f"{_F}:FlatParam.unshard",
        "gathered[: self.numel]",
        "gathered[-self.numel :]",
        "round-trip",
    ),
    Mutant(
        "adam-step-from-zero",
        "off-by-one in the step counter: Adam's bias correction starts at step 0",
        f"{_F}:fsdp1_train",
        "for step, per_rank in enumerate(batches, start=1):",
        "for step, per_rank in enumerate(batches):",
        "training-matches-replica",
    ),
    Mutant(
        "shard-size-rounded-to-nearest",
        "the shard size is Ψ/N rounded to the nearest integer instead of up, so an uneven split loses "
        "its last elements",
        f"{_F}:FlatParam.__init__",
        "self.shard_size = math.ceil(self.numel / world)",
        "self.shard_size = round(self.numel / world)",
        "round-trip",
        kind="expected-value",
    ),
    Mutant(
        "adam-without-first-moment-correction",
        "the shared Adam step leaves out the first moment's bias correction 1/(1 - b1^t)",
        "kernels.fsdp1.model:adam_step",
        "p.sub_(lr * (m / (1 - b1**step))",
        "p.sub_(lr * m",
        "training-matches-replica",
        kind="independent-reference",
    ),
)
