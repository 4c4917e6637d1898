"""Declared verification of Megatron tensor parallelism.

Compared: column-parallel and row-parallel linear layers and the column → GeLU → row
MLP on simulated ranks against the unsharded layers, outputs and gradients (each
rank's weight gradient against the matching slice of the full one), for 2 and 4 ranks;
and the same rank code over 2 CPU processes with torch.distributed (gloo).
"""

from __future__ import annotations

from dataclasses import replace

import torch

from kernels.checks import Verification, check
from kernels.families import BATCH_OF_ONE
from kernels.measures import Outcome, Pair, Setting, compare_all, gradients
from kernels.megatron_tp.naive import mlp
from kernels.megatron_tp.sharded import linear_rank, tp_rank
from kernels.simulated import simulate

T, D, H = 45, 24, 64
#: Why the simulated ranks run on the CPU whatever the device: the collectives of f and g
#: sit inside the backward pass, and CUDA's autograd runs every backward of a device on one
#: thread, where the ranks' threads would wait for each other at the first all-reduce.
ON_CPU = "simulated ranks on the CPU (CUDA's autograd runs each device's backward on one thread)"


def _ranks_setting(s: Setting) -> tuple[Setting, str]:
    """``s`` itself on the CPU; else the same seed and dtype on the CPU, and a note saying so."""
    if s.device.type == "cpu":
        return s, ""
    return Setting(dtype=s.dtype, seed=s.seed), f"; {ON_CPU}"


def _weights(s: Setting, offset: int, tokens: int = T):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    return (
        s.randn(tokens, D, gen=gen),
        s.randn(H, D, gen=gen, scale=D**-0.5),
        s.randn(D, H, gen=gen, scale=H**-0.5),
        s.randn(D, gen=gen),
        s.randn(tokens, D, gen=gen),
    )


def _mlp_pairs(ranks: list[dict[str, torch.Tensor]], s: Setting, tag: str, tokens: int = T) -> list[Pair]:
    x, a, b, bias, cot = _weights(s, 0, tokens)
    (ref,), (dx, da, db) = gradients(lambda x, a, b: mlp(x, a, b, bias), (x, a, b), (cot,))
    world = len(ranks)
    pairs: list[Pair] = []
    for r, got in enumerate(ranks):
        pairs += [
            (f"out rank {r} {tag}", ref, got["out"]),
            (f"dx rank {r} {tag}", dx, got["dx"]),
            (f"dA shard {r} {tag}", da.chunk(world, 0)[r], got["dA"]),
            (f"dB shard {r} {tag}", db.chunk(world, 1)[r], got["dB"]),
        ]
    return pairs


@check("mlp-simulated-ranks", 1e-5, gradients=True, covers=(BATCH_OF_ONE,))
def mlp_matches(s: Setting) -> Outcome:
    """The tensor-parallel MLP equals the unsharded MLP: outputs, input gradient, and each
    rank's weight gradient as the slice of the full gradient, also for a single token."""
    s, note = _ranks_setting(s)
    pairs = []
    for world, tokens in ((2, T), (4, T), (4, 1)):
        x, a, b, bias, cot = _weights(s, 0, tokens)
        pairs += _mlp_pairs(simulate(world, tp_rank, x, a, b, bias, cot), s, f"N={world} T={tokens}", tokens)
    out = compare_all(pairs)
    return replace(out, detail=out.detail + note)


@check("column-and-row-linear", 1e-5, gradients=True)
def linear_halves(s: Setting) -> Outcome:
    """Column-parallel (gathered) and row-parallel (all-reduced) linear layers equal the
    full linear layer, outputs and gradients."""
    s, note = _ranks_setting(s)
    x, a, b, _, _ = _weights(s, 1)
    gen = s.generator(2)
    cot_h, cot_d = s.randn(T, H, gen=gen), s.randn(T, D, gen=gen)
    h_in = s.randn(T, H, gen=gen)
    (ref_c,), (dxc, dac) = gradients(lambda x, a: x @ a.T, (x, a), (cot_h,))
    (ref_r,), (dxr, dbr) = gradients(lambda x, b: x @ b.T, (h_in, b), (cot_d,))
    world = 2
    ranks = simulate(world, linear_rank, x, a, cot_h, h_in, b, cot_d)
    # Each rank's dX of the row half covers only its slice of X: the ranks' sum is dX.
    row_dx = ranks[0]["row dx"] + ranks[1]["row dx"]
    pairs = [("row dx", dxr, row_dx)]
    for r, got in enumerate(ranks):
        pairs += [
            (f"column out rank {r}", ref_c, got["column"]),
            (f"column dx rank {r}", dxc, got["column dx"]),
            (f"column dW shard {r}", dac.chunk(world, 0)[r], got["column dW"]),
            (f"row out rank {r}", ref_r, got["row"]),
            (f"row dW shard {r}", dbr.chunk(world, 1)[r], got["row dW"]),
        ]
    out = compare_all(pairs)
    return replace(out, detail=out.detail + note)


@check("gloo-processes", 1e-5, gradients=True)
def gloo_processes(s: Setting) -> Outcome:
    """Over 2 CPU processes with torch.distributed gloo the all-reduces of f and g give
    the unsharded outputs and gradients."""
    from kernels.distributed import run_gloo

    cpu = Setting(seed=s.seed)
    ranks = run_gloo(tp_rank, 2, *_weights(cpu, 0))
    out = compare_all(_mlp_pairs(ranks, cpu, "gloo"))
    return Outcome(out.max_abs, out.max_rel, f"tp_rank over 2 gloo processes against the unsharded MLP; {out.detail}")


VERIFICATION = Verification(
    "megatron-tp",
    __doc__ or "",
    (mlp_matches, linear_halves, gloo_processes),
    shapes=(f"T{T}-d{D}-h{H}, N=2 and 4 simulated ranks", "N=2 gloo processes (CPU)"),
)
