"""Bugs a person makes in Megatron's tensor-parallel layers and their f/g operators."""

from __future__ import annotations

from kernels.mutation import Mutant

_S = "kernels.megatron_tp.sharded"

MUTANTS = (
    Mutant(
        "f-backward-skips-all-reduce",
        "f's backward returns this rank's partial input gradient instead of all-reducing it",
        f"{_S}:_F.backward",
        "return ctx.comm.all_reduce(grad), None",
        "return grad, None",
        "mlp-simulated-ranks",
    ),
    Mutant(
        "g-backward-averages",
        "g's backward divides the output gradient by the world size, as if averaging",
        f"{_S}:_G.backward",
        "return grad, None",
        "return grad / ctx.comm.world, None",
        "mlp-simulated-ranks",
    ),
    Mutant(
        "bias-on-every-rank",
        "every rank adds the bias to its partial output, so the all-reduce adds it N times",
        f"{_S}:tp_mlp",
        "out: torch.Tensor = _G.apply(partial, comm) + bias",
        "out: torch.Tensor = _G.apply(partial + bias, comm)",
        "mlp-simulated-ranks",
    ),
    Mutant(
        "gather-backward-wrong-slice",
        "the gathered column output's backward keeps rank 0's slice on every rank",
        f"{_S}:_GatherLast.backward",
        "grad.chunk(ctx.comm.world, dim=-1)[ctx.comm.rank]",
        "grad.chunk(ctx.comm.world, dim=-1)[0]",
        "column-and-row-linear",
    ),
)
