"""ZeRO stages 1–3 on simulated ranks.

Rank r of N owns the r-th slice of the flat parameter vector (Ψ/N elements) and keeps
only that slice of the fp32 optimizer state (stage ≥ 1), of the gradient (stage ≥ 2)
and of the bf16 parameters (stage 3). One step:

- stage 1: full local gradient → reduce-scatter → update own slice → all-gather params;
- stage 2: the same, but only the reduced gradient slice is kept;
- stage 3: all-gather the parameters for the forward, again for the backward (they
  were freed in between), reduce-scatter the gradient, update the slice, keep it.

Per-rank bytes: 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N and 16Ψ/N; traffic: 2Ψ, 2Ψ and 3Ψ per step.
``zero_bytes`` gives the formula.
"""

from __future__ import annotations

import torch

from kernels.simulated import Ranks
from kernels.zero.model import MLPShape, adam_update, local_grad

__all__ = ["ZeroRank", "zero_bytes", "zero_train"]


def zero_bytes(stage: int, psi: float, world: int) -> float:
    """Per-rank bytes of parameters, gradients and Adam state (K = 12)."""
    return {
        0: 16 * psi,
        1: 4 * psi + 12 * psi / world,
        2: 2 * psi + 14 * psi / world,
        3: 16 * psi / world,
    }[stage]


class ZeroRank:
    def __init__(self, start: torch.Tensor, stage: int, rank: int, world: int) -> None:
        self.stage, self.rank, self.world = stage, rank, world
        own = start.chunk(world)[rank]
        self.params16 = (own if stage == 3 else start).to(torch.bfloat16)
        self.grad16 = torch.zeros(
            start.numel() if stage == 1 else own.numel(), dtype=torch.bfloat16, device=start.device
        )
        self.master = own.float().clone()
        self.m = torch.zeros_like(self.master)
        self.v = torch.zeros_like(self.master)

    def held(self) -> dict[str, torch.Tensor]:
        return {
            "params16": self.params16,
            "grad16": self.grad16,
            "master": self.master,
            "m": self.m,
            "v": self.v,
        }


def zero_train(
    start: torch.Tensor,
    shape: MLPShape,
    batches: list[list[tuple[torch.Tensor, torch.Tensor]]],
    world: int,
    stage: int,
) -> tuple[list[ZeroRank], Ranks]:
    if start.numel() % world:
        raise ValueError(
            f"pad the flat parameters to a multiple of {world} ranks (got {start.numel()})"
        )
    ranks = [ZeroRank(start, stage, r, world) for r in range(world)]
    comm = Ranks(world)
    for step, per_rank in enumerate(batches, start=1):
        if stage == 3:
            full = comm.all_gather([r.params16 for r in ranks])  # for the forward; freed after it
            full = comm.all_gather([r.params16 for r in ranks])  # again for the backward
        else:
            full = [r.params16 for r in ranks]
        local = [
            local_grad(p, shape, x, y).to(torch.bfloat16)
            for p, (x, y) in zip(full, per_rank, strict=True)
        ]
        if stage == 1:
            for r, g in zip(ranks, local, strict=True):
                r.grad16 = g  # stage 1 keeps the full local gradient
        reduced = comm.reduce_scatter([g.float() for g in local])
        for r, g in zip(ranks, reduced, strict=True):
            if stage >= 2:
                r.grad16 = g.to(torch.bfloat16)
            adam_update(r.master, r.m, r.v, g / world, step)
        new16 = [r.master.to(torch.bfloat16) for r in ranks]
        if stage == 3:
            for r, p in zip(ranks, new16, strict=True):
                r.params16 = p
        else:
            gathered = comm.all_gather(new16)
            for r, p in zip(ranks, gathered, strict=True):
                r.params16 = p
    return ranks, comm
