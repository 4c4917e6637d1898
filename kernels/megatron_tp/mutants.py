"""Bugs a person makes in Megatron's tensor-parallel layers and their f/g operators."""

from __future__ import annotations

from kernels.mutation import Mutant

_S = "kernels.megatron_tp.sharded"

MUTANTS = (
    Mutant(
        "f-backward-skips-all-reduce",
        "f's backward returns one rank's partial input gradient instead of all-reducing them",
        f"{_S}:_F.backward",
        "    for g in grads[1:]:\n        total = total + g\n    return total, None",
        "    return total, None",
        "mlp-simulated-ranks",
    ),
    Mutant(
        "g-backward-averages",
        "g's backward divides the output gradient by the world size, as if averaging",
        f"{_S}:_G.backward",
        "return tuple(grad for _ in range(ctx.world))",
        "return tuple(grad / ctx.world for _ in range(ctx.world))",
        "mlp-simulated-ranks",
    ),
    Mutant(
        "bias-on-every-rank",
        "every rank adds the bias to its partial output, so the all-reduce adds it N times",
        f"{_S}:tp_mlp",
        "F.gelu(xr @ ar.T) @ br.T for xr, ar, br in",
        "F.gelu(xr @ ar.T) @ br.T + bias for xr, ar, br in",
        "mlp-simulated-ranks",
    ),
)
