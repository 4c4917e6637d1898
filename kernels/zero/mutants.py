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
    Mutant(
        "stage2-allocates-a-full-gradient",
        "stage 2 allocates its gradient buffer at full size, as stage 1 does; the first reduce-scatter "
        "replaces it by the slice, so the buffer is gone by the end of the step",
        f"{_S}:ZeroRank.__init__",
        "padded.numel() if stage == 1 else own.numel()",
        "padded.numel() if stage <= 2 else own.numel()",
        "memory-per-rank",
        kind="peak-memory",
    ),
    Mutant(
        "stage2-holds-the-local-gradient",
        "stages 1 and 2 both keep the full local gradient until the reduce-scatter; stage 2 then keeps "
        "only its slice, so only the peak shows the full buffer",
        f"{_S}:zero_rank",
        "if stage == 1:",
        "if stage >= 1:",
        "memory-per-rank",
        kind="peak-memory",
    ),
    Mutant(
        "stage3-keeps-gathered-parameters",
        "stage 3 keeps the parameters gathered for the backward on the rank until the update is applied, "
        "then drops them: the full bf16 parameters are held next to the sharded state",
        f"{_S}:zero_rank",
        "full = comm.all_gather(r.params16)  # again for the backward",
        "r.gathered = full = comm.all_gather(r.params16)  # again for the backward",
        "memory-per-rank",
        kind="peak-memory",
    ),
    Mutant(
        "adam-without-second-moment-correction",
        "the shared Adam leaves out the second moment's bias correction 1/(1 - b2^t)",
        "kernels.zero.model:adam_update",
        "v_hat = v / (1 - cfg.b2**step)",
        "v_hat = v",
        "same-updates-as-ddp",
        kind="independent-reference",
    ),
    Mutant(
        "gathered-parameters-keep-the-padding",
        "the all-gathered parameters keep the padding of the last shard, so the rank's parameter "
        "vector is N·⌈Ψ/N⌉ long instead of Ψ whenever N does not divide Ψ",
        f"{_S}:zero_rank",
        "comm.all_gather(new16)[: r.numel]",
        "comm.all_gather(new16)",
        "same-updates-as-ddp",
        kind="adversarial-input",
    ),
)
