"""Declared verification of ZeRO.

Compared: stages 1, 2 and 3 on simulated ranks against DDP: the same parameters after
every step, exactly (the reductions run in the same order). Properties: the bytes each
rank keeps, counted tensor by tensor, are 16Ψ, 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N and 16Ψ/N (and
the formula gives 120 / 31.4 / 16.6 / 1.9 GB for 7.5B parameters on 64 ranks); traffic
is 2Ψ per step, 3Ψ for stage 3. ZeRO-3 against DDP also runs over 2 gloo processes.
"""

from __future__ import annotations

import torch

from kernels.checks import Check, Outcome, Setting, Verification, against, compare_all, count, worst
from kernels.zero.model import MLPShape, microbatches
from kernels.zero.naive import ddp_train
from kernels.zero.sharded import zero_bytes, zero_train

SHAPE = MLPShape()  # Ψ = 320
WORLD, STEPS = 4, 3


def _run(s: Setting):  # type: ignore[no-untyped-def]
    gen = s.generator(0)
    start = (torch.randn(SHAPE.numel, generator=gen) * 0.3).to(s.device)
    batches = [[(x.to(s.device), y.to(s.device)) for x, y in step] for step in microbatches(WORLD, STEPS, SHAPE, gen)]
    return start, batches


def same_updates_as_ddp(s: Setting) -> Outcome:
    start, batches = _run(s)
    ddp, _ = ddp_train(start, SHAPE, batches, WORLD)
    pairs = []
    for stage in (1, 2, 3):
        ranks, _ = zero_train(start, SHAPE, batches, WORLD, stage)
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
    ddp, _ = ddp_train(start, SHAPE, batches[:1], WORLD)
    counted = {0: max(sum(t.numel() * t.element_size() for t in r.held().values()) for r in ddp)}
    for stage in (1, 2, 3):
        ranks, _ = zero_train(start, SHAPE, batches[:1], WORLD, stage)
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
    _, ddp_comm = ddp_train(start, SHAPE, batches[:1], WORLD)
    results = [count(ddp_comm.sent, 2 * psi, "DDP")]
    for stage, factor in ((1, 2), (2, 2), (3, 3)):
        _, comm = zero_train(start, SHAPE, batches[:1], WORLD, stage)
        results.append(count(comm.sent, factor * psi, f"stage {stage}: {comm.sent} elements"))
    return worst(results, "elements sent per rank per step: DDP 2Ψ, Z1 2Ψ, Z2 2Ψ, Z3 3Ψ")


def gloo_processes(s: Setting) -> Outcome:
    from kernels.distributed import run_gloo
    from kernels.zero.gloo import zero_rank

    ranks = run_gloo(zero_rank, 2, s.seed, 2)
    err = max(max(r["master"], r["params16"]) for r in ranks)
    return Outcome(
        err,
        err / max(r["scale"] for r in ranks),
        "ZeRO-3 (all-gather + reduce-scatter) vs DDP (all-reduce) over 2 gloo processes, 2 steps",
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
            "Over 2 gloo processes ZeRO-3 reaches DDP's parameters.",
            gloo_processes,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
