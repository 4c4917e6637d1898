"""Declared verification of ZeRO.

Compared: stages 1, 2 and 3 on simulated ranks against DDP written independently (its
own gradient, Kingma & Ba's Adam): the same parameters after every step, to float32
rounding, also when Ψ leaves a remainder of one element over the ranks. Properties: the
bytes each rank holds at any moment of the step (every assignment counted), worked out
here: 16Ψ, 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N and 16Ψ/N with padded shards of ⌈Ψ/N⌉ (and the formula
gives 120 / 31.4 / 16.6 / 1.9 GB for 7.5B parameters on 64 ranks); traffic is 2Ψ per
step, 3Ψ for stage 3. The same rank code (DDP and ZeRO-3) also runs over 2 gloo
processes.
"""

from __future__ import annotations

import math

import torch

from kernels.checks import Case, Verification, case, check
from kernels.families import UNEVEN_SIZES
from kernels.measures import Outcome, Setting, against, compare_all, count, worst
from kernels.simulated import Comm
from kernels.zero.model import MLPShape, microbatches
from kernels.zero.naive import DDPRank, ddp_rank, ddp_train
from kernels.zero.sharded import ZeroRank, zero_bytes, zero_rank, zero_train

#: the model (Ψ = h·d + out·h elements) and the world size N; Ψ = 340 leaves one element
#: over 3 ranks
CASES = (case(d=12, h=20, out=4, N=4), case(UNEVEN_SIZES, d=12, h=20, out=5, N=3))
STEPS = 3


def _shape(c: Case) -> MLPShape:
    return MLPShape(c.d, c.h, c.out)


def _run(s: Setting, c: Case, steps: int = STEPS):  # type: ignore[no-untyped-def]
    gen = s.generator(0)
    shape = _shape(c)
    start = (torch.randn(shape.numel, generator=gen) * 0.3).to(s.device)
    batches = [[(x.to(s.device), y.to(s.device)) for x, y in step] for step in microbatches(c.N, steps, shape, gen)]
    return shape, start, batches


def _gathered(ranks: list[ZeroRank], stage: int, numel: int) -> torch.Tensor:
    return torch.cat([r.params16 for r in ranks])[:numel] if stage == 3 else ranks[0].params16


@check("same-updates-as-ddp", 1e-6, covers=(UNEVEN_SIZES,))
def same_updates_as_ddp(s: Setting) -> Outcome:
    """Every ZeRO stage produces DDP's fp32 master parameters and Adam moments after 3
    steps (to float32 rounding: the two Adams are written apart), and its bf16 parameters
    are exactly the bf16 copy of its master."""
    pairs = []
    for c in CASES:
        shape, start, batches = _run(s, c)
        ddp = ddp_train(start, shape, batches, c.N)
        for stage in (1, 2, 3):
            ranks = zero_train(start, shape, batches, c.N, stage)
            master = torch.cat([r.master for r in ranks])[: shape.numel]
            pairs += [
                (f"{c.id} stage {stage} master", ddp[0].master, master),
                (f"{c.id} stage {stage} first moment", ddp[0].m, torch.cat([r.m for r in ranks])[: shape.numel]),
                (f"{c.id} stage {stage} second moment", ddp[0].v, torch.cat([r.v for r in ranks])[: shape.numel]),
                (
                    f"{c.id} stage {stage} bf16 = master",
                    master.to(torch.bfloat16).float(),
                    _gathered(ranks, stage, shape.numel).float(),
                ),
            ]
    return compare_all(pairs)


def _expected_bytes(stage: int, psi: int, world: int) -> int:
    """Model-state bytes a rank holds, from the formula with padded shards s = ⌈Ψ/N⌉:
    bf16 parameters and gradients (2 bytes), fp32 master and moments (12 bytes)."""
    shard = math.ceil(psi / world)
    padded = shard * world
    return {0: 16 * psi, 1: 2 * padded + 2 * padded + 12 * shard, 2: 2 * padded + 14 * shard, 3: 16 * shard}[stage]


@check("memory-per-rank", 0.0, measure="abs", covers=(UNEVEN_SIZES,))
def memory_by_counting(s: Setting) -> Outcome:
    """The most bytes a rank holds at any moment of a training step, every assignment
    counted, are 16Ψ (DDP), 4Ψ+12Ψ/N, 2Ψ+14Ψ/N and 16Ψ/N (with padded shards ⌈Ψ/N⌉), and
    the formula gives 120/31.4/16.6/1.9 GB for 7.5B parameters on 64 ranks."""
    results, text = [], []
    for c in CASES:
        shape, start, batches = _run(s, c, steps=2)
        counted = {0: max(r.peak for r in ddp_train(start, shape, batches, c.N))}
        for stage in (1, 2, 3):
            counted[stage] = max(r.peak for r in zero_train(start, shape, batches, c.N, stage))
        for stage, got in counted.items():
            results.append(count(got, _expected_bytes(stage, shape.numel, c.N), f"{c.id} stage {stage} peak"))
        text.append(f"Ψ={shape.numel}, N={c.N}: " + "/".join(f"{b}" for b in counted.values()) + " B")
    for stage, gb in enumerate((120.0, 31.4, 16.6, 1.9)):
        results.append(against(round(zero_bytes(stage, 7.5e9, 64) / 1e9, 1), gb, f"7.5B on 64 ranks, stage {stage}"))
    return worst(results, "peak per rank (DDP/Z1/Z2/Z3) " + "; ".join(text) + "; 7.5B/64 ranks: 120/31.4/16.6/1.9 GB")


@check("traffic", 0.0, measure="abs", covers=(UNEVEN_SIZES,))
def traffic(s: Setting) -> Outcome:
    """Per step each rank sends 2Ψ elements (DDP, stages 1-2) and 3Ψ with stage 3 (Ψ
    padded to N·⌈Ψ/N⌉ for the sharded collectives)."""
    results = []
    for c in CASES:
        shape, start, batches = _run(s, c, steps=1)
        padded = math.ceil(shape.numel / c.N) * c.N
        results += [count(r.sent, 2 * shape.numel, f"{c.id} DDP rank") for r in ddp_train(start, shape, batches, c.N)]
        for stage, factor in ((1, 2), (2, 2), (3, 3)):
            for rank in zero_train(start, shape, batches, c.N, stage):
                results.append(count(rank.sent, factor * padded, f"{c.id} stage {stage} rank {rank.rank}"))
    return worst(results, "elements sent per rank per step: DDP 2Ψ, Z1 2Ψ, Z2 2Ψ, Z3 3Ψ")


def ddp_and_zero3(
    comm: Comm, start: torch.Tensor, batches: list[list[tuple[torch.Tensor, torch.Tensor]]]
) -> tuple[DDPRank, ZeroRank]:
    """One rank of the gloo run: DDP, then ZeRO-3, the same code the simulated ranks run."""
    shape = _shape(CASES[0])
    return ddp_rank(comm, start, shape, batches), zero_rank(comm, start, shape, batches, 3)


@check("gloo-processes", 1e-6)
def gloo_processes(s: Setting) -> Outcome:
    """Over 2 gloo processes the same rank code (DDP and ZeRO-3) reaches the simulated
    ranks' parameters, and ZeRO-3 reaches DDP's (to float32 rounding)."""
    from kernels.distributed import run_gloo

    cpu = Setting(seed=s.seed)
    shape, start, batches = _run(cpu, CASES[0], steps=2)
    ranks = run_gloo(ddp_and_zero3, 2, start, batches)
    ddp = ddp_train(start, shape, batches, 2)
    zero3 = zero_train(start, shape, batches, 2, 3)
    pairs = [
        ("gloo DDP master", ddp[0].master, ranks[0][0].master),
        ("gloo DDP bf16 params", ddp[0].params16.float(), ranks[1][0].params16.float()),
        ("gloo ZeRO-3 master", torch.cat([r.master for r in zero3]), torch.cat([r[1].master for r in ranks])),
        ("gloo ZeRO-3 vs DDP", ddp[0].master, torch.cat([r[1].master for r in ranks])),
    ]
    out = compare_all(pairs)
    detail = f"DDP and ZeRO-3 rank code over 2 gloo processes, 2 steps, against the simulated ranks; {out.detail}"
    return Outcome(out.max_abs, out.max_rel, detail)


VERIFICATION = Verification(
    "zero",
    __doc__ or "",
    (same_updates_as_ddp, memory_by_counting, traffic, gloo_processes),
    shapes=(*(f"Ψ={_shape(c).numel}, N={c.N} simulated ranks, {STEPS} steps" for c in CASES), "N=2 gloo processes"),
    dtype="float32",
)
