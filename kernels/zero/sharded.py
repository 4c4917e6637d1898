"""ZeRO stages 1–3, one rank's code.

The flat parameter vector of Ψ elements is padded to N·s elements, s = ⌈Ψ/N⌉, and rank
r of N owns the r-th slice of s elements. It keeps only that slice of the fp32 optimizer
state (stage ≥ 1), of the gradient (stage ≥ 2) and of the bf16 parameters (stage 3).
One step:

- stage 1: full local gradient → reduce-scatter → update own slice → all-gather params;
- stage 2: the same, but only the reduced gradient slice is kept;
- stage 3: all-gather the parameters for the forward, again for the backward (they
  were freed in between), reduce-scatter the gradient, update the slice, keep it.

Per-rank bytes (with N·s = Ψ when N divides Ψ): 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N and 16Ψ/N;
traffic: 2Ψ, 2Ψ and 3Ψ per step. ``zero_bytes`` gives the paper's formula. The rank
state is counted after every assignment (:class:`kernels.memory.Tracked`), so a buffer
held in the middle of a step counts. ``zero_rank`` is SPMD code over a
:class:`kernels.simulated.Comm`: simulated ranks run it in threads (``zero_train``),
and gloo processes run the same function.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from kernels.memory import Tracked
from kernels.simulated import Comm, simulate
from kernels.zero.model import MLPShape, adam_update, local_grad

__all__ = ["ZeroRank", "zero_bytes", "zero_rank", "zero_train"]

Batches = list[list[tuple[torch.Tensor, torch.Tensor]]]


def zero_bytes(stage: int, psi: float, world: int) -> float:
    """Per-rank bytes of parameters, gradients and Adam state (K = 12)."""
    return {
        0: 16 * psi,
        1: 4 * psi + 12 * psi / world,
        2: 2 * psi + 14 * psi / world,
        3: 16 * psi / world,
    }[stage]


def _padded(start: torch.Tensor, world: int) -> torch.Tensor:
    """The flat vector padded with zeros to a multiple of the world size."""
    return F.pad(start, (0, math.ceil(start.numel() / world) * world - start.numel()))


class ZeroRank(Tracked):
    def __init__(self, start: torch.Tensor, stage: int, rank: int, world: int) -> None:
        self.stage, self.rank, self.world, self.numel = stage, rank, world, start.numel()
        padded = _padded(start, world)
        own = padded.chunk(world)[rank]
        self.params16 = (own if stage == 3 else start).to(torch.bfloat16)
        self.grad16 = torch.zeros(
            padded.numel() if stage == 1 else own.numel(), dtype=torch.bfloat16, device=start.device
        )
        self.master = own.float().clone()
        self.m = torch.zeros_like(self.master)
        self.v = torch.zeros_like(self.master)
        #: Elements this rank sent.
        self.sent = 0


def zero_rank(comm: Comm, start: torch.Tensor, shape: MLPShape, batches: Batches, stage: int) -> ZeroRank:
    """Train rank ``comm.rank`` at ZeRO ``stage`` on its microbatches ``batches[step][rank]``."""
    r = ZeroRank(start, stage, comm.rank, comm.world)
    for step, per_rank in enumerate(batches, start=1):
        x, y = per_rank[comm.rank]
        if stage == 3:
            full = comm.all_gather(r.params16)  # for the forward; freed after it
            full = comm.all_gather(r.params16)  # again for the backward
        else:
            full = r.params16
        local = _padded(local_grad(full[: r.numel], shape, x, y), comm.world).to(torch.bfloat16)
        if stage == 1:
            r.grad16 = local  # stage 1 keeps the full local gradient
        reduced = comm.reduce_scatter(local.float())
        if stage >= 2:
            r.grad16 = reduced.to(torch.bfloat16)
        adam_update(r.master, r.m, r.v, reduced / comm.world, step)
        new16 = r.master.to(torch.bfloat16)
        r.params16 = new16 if stage == 3 else comm.all_gather(new16)[: r.numel]
    r.sent = comm.sent
    return r


def zero_train(start: torch.Tensor, shape: MLPShape, batches: Batches, world: int, stage: int) -> list[ZeroRank]:
    """ZeRO ``stage`` on ``world`` simulated ranks."""
    ranks: list[ZeroRank] = simulate(world, zero_rank, start, shape, batches, stage)
    return ranks
