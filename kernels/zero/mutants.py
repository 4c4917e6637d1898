"""Bugs a person makes in ZeRO's sharded training step."""

from __future__ import annotations

from kernels.mutation import Mutant

_S = "kernels.zero.sharded"

MUTANTS = (
    Mutant(
        "summed-gradient",
        "the reduce-scattered gradient slice is used as the sum over ranks, not the mean",
        f"{_S}:zero_rank",
        "adam_update(r.master, r.m, r.v, reduced / comm.world, step)",
        "adam_update(r.master, r.m, r.v, reduced, step)",
        "same-updates-as-ddp",
    ),
    Mutant(
        "stage3-gathers-once",
        "stage 3 keeps the gathered parameters from the forward for the backward instead of "
        "freeing and gathering them again",
        f"{_S}:zero_rank",
        "            full = comm.all_gather(r.params16)  # again for the backward\n",
        "",
        "traffic",
    ),
    Mutant(
        "stage2-formula-typo",
        "the stage-2 formula counts 12Ψ/N of sharded state instead of 14Ψ/N (the gradient shard forgotten)",
        f"{_S}:zero_bytes",
        "2: 2 * psi + 14 * psi / world",
        "2: 2 * psi + 12 * psi / world",
        "memory-per-rank",
    ),
)
