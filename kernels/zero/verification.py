"""Declared verification of ZeRO.

Compared: stages 1, 2 and 3 on simulated ranks against DDP: the same parameters after
every step, exactly (the reductions run in the same order). Properties: the bytes each
rank keeps, counted tensor by tensor, are 16Ψ, 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N and 16Ψ/N (and
the formula gives 120 / 31.4 / 16.6 / 1.9 GB for 7.5B parameters on 64 ranks); traffic
is 2Ψ per step, 3Ψ for stage 3. The same rank code (DDP and ZeRO-3) also runs over 2 gloo processes.
"""

from __future__ import annotations

import torch

from kernels.checks import Check, Outcome, Setting, Verification, against, compare_all, count, worst
from kernels.simulated import Comm
from kernels.zero.model import MLPShape, microbatches
from kernels.zero.naive import DDPRank, ddp_rank, ddp_train
from kernels.zero.sharded import ZeroRank, zero_bytes, zero_rank, zero_train

SHAPE = MLPShape()  # Ψ = 320
WORLD, STEPS = 4, 3


def _run(s: Setting):  # type: ignore[no-untyped-def]
    gen = s.generator(0)
    start = (torch.randn(SHAPE.numel, generator=gen) * 0.3).to(s.device)
    batches = [[(x.to(s.device), y.to(s.device)) for x, y in step] for step in microbatches(WORLD, STEPS, SHAPE, gen)]
    return start, batches


def same_updates_as_ddp(s: Setting) -> Outcome:
    start, batches = _run(s)
    ddp = ddp_train(start, SHAPE, batches, WORLD)
    pairs = []
    for stage in (1, 2, 3):
        ranks = zero_train(start, SHAPE, batches, WORLD, stage)
        master = torch.cat([r.master for r in ranks])
        params = torch.cat([r.params16 for r in ranks]).float() if stage == 3 else ranks[0].params16.float()
        pairs += [
            (f"stage {stage} master", ddp[0].master, master),
            (f"stage {stage} bf16 params", ddp[0].params16.float(), params),
        ]
    return compare_all(pairs)


def memory_by_counting(s: Setting) -> Outcome:
    start, batches = _run(s)
    psi = SHAPE.numel
    results = []
    text = []
    ddp = ddp_train(start, SHAPE, batches[:1], WORLD)
    counted = {0: max(sum(t.numel() * t.element_size() for t in r.held().values()) for r in ddp)}
    for stage in (1, 2, 3):
        ranks = zero_train(start, SHAPE, batches[:1], WORLD, stage)
        counted[stage] = max(sum(t.numel() * t.element_size() for t in r.held().values()) for r in ranks)
    for stage, got in counted.items():
        results.append(count(got, int(zero_bytes(stage, psi, WORLD)), f"stage {stage}"))
        text.append(f"{'DDP' if stage == 0 else f'Z{stage}'} {got} B")
    figures = (120.0, 31.4, 16.6, 1.9)
    for stage, gb in enumerate(figures):
        results.append(against(round(zero_bytes(stage, 7.5e9, 64) / 1e9, 1), gb, f"7.5B on 64 ranks, stage {stage}"))
    return worst(
        results,
        f"Ψ={psi}, N={WORLD}: " + ", ".join(text) + "; formula at 7.5B/64 ranks: 120/31.4/16.6/1.9 GB",
    )


def traffic(s: Setting) -> Outcome:
    start, batches = _run(s)
    psi = SHAPE.numel
    ddp = ddp_train(start, SHAPE, batches[:1], WORLD)
    results = [count(r.sent, 2 * psi, f"DDP rank {r_i}") for r_i, r in enumerate(ddp)]
    for stage, factor in ((1, 2), (2, 2), (3, 3)):
        for rank in zero_train(start, SHAPE, batches[:1], WORLD, stage):
            results.append(count(rank.sent, factor * psi, f"stage {stage} rank {rank.rank}: {rank.sent} elements"))
    return worst(results, "elements sent per rank per step: DDP 2Ψ, Z1 2Ψ, Z2 2Ψ, Z3 3Ψ")


def ddp_and_zero3(
    comm: Comm, start: torch.Tensor, batches: list[list[tuple[torch.Tensor, torch.Tensor]]]
) -> tuple[DDPRank, ZeroRank]:
    """One rank of the gloo run: DDP, then ZeRO-3, the same code the simulated ranks run."""
    return ddp_rank(comm, start, SHAPE, batches), zero_rank(comm, start, SHAPE, batches, 3)


def gloo_processes(s: Setting) -> Outcome:
    """Over 2 gloo processes, the rank code gives the simulated ranks' parameters exactly."""
    from kernels.distributed import run_gloo

    cpu = Setting(seed=s.seed)
    start, batches = _run(cpu)
    batches = batches[:2]
    ranks = run_gloo(ddp_and_zero3, 2, start, batches)
    ddp = ddp_train(start, SHAPE, batches, 2)
    zero3 = zero_train(start, SHAPE, batches, 2, 3)
    pairs = [
        ("gloo DDP master", ddp[0].master, ranks[0][0].master),
        ("gloo DDP bf16 params", ddp[0].params16.float(), ranks[1][0].params16.float()),
        ("gloo ZeRO-3 master", torch.cat([r.master for r in zero3]), torch.cat([r[1].master for r in ranks])),
        ("gloo ZeRO-3 vs DDP", ddp[0].master, torch.cat([r[1].master for r in ranks])),
    ]
    out = compare_all(pairs)
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"DDP and ZeRO-3 rank code over 2 gloo processes, 2 steps, against the simulated ranks; {out.detail}",
    )


VERIFICATION = Verification(
    technique="zero",
    compares="ZeRO stages 1-3 (reduce-scatter, sharded Adam state, all-gather) against DDP on "
    "simulated ranks "
    "and, for stage 3, over gloo processes: parameters after each step",
    shapes=(
        f"Ψ={SHAPE.numel}, N={WORLD} simulated ranks, {STEPS} steps",
        "N=2 gloo processes, 2 steps",
    ),
    dtype="float32",
    checks=(
        Check(
            "same-updates-as-ddp",
            "Every ZeRO stage produces exactly DDP's parameters (fp32 master and bf16 copies) after 3 steps.",
            same_updates_as_ddp,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "memory-per-rank",
            "Counted per-rank bytes are 16Ψ (DDP), 4Ψ+12Ψ/N, 2Ψ+14Ψ/N and 16Ψ/N.",
            memory_by_counting,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "traffic",
            "Per step each rank sends 2Ψ elements (DDP, stages 1-2) and 3Ψ with stage 3.",
            traffic,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "gloo-processes",
            "Over 2 gloo processes the same rank code (DDP and ZeRO-3) reaches the simulated ranks' "
            "parameters exactly, and ZeRO-3 reaches DDP's.",
            gloo_processes,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
