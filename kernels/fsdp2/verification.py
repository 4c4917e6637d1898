"""Declared verification of FSDP2 per-parameter Shard(0) sharding.

Compared: per-parameter row sharding against FSDP1's flat element-wise sharding
(exactly) and against unsharded training (its own Adam): the same parameters after
three steps. Properties: rank r holds max(0, min(⌈R/N⌉, R − r·⌈R/N⌉)) rows of a
parameter of R rows (worked out here: 7 rows over 2 and 4 ranks leave a one-row block, 3
rows over 4 ranks an empty one), its gradient shard is that row block of the mean
gradient, and every local shard holds whole rows (none straddles parameters), unlike
FSDP1's flat shards.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import torch

from kernels.checks import Verification, check
from kernels.families import UNEVEN_SIZES
from kernels.fsdp1.flat import FlatParam, fsdp1_train
from kernels.fsdp1.model import SHAPES
from kernels.fsdp1.verification import STEPS, mean_gradient, training_setup
from kernels.fsdp2.naive import replicated_train
from kernels.fsdp2.per_param import RowSharded, fsdp2_train
from kernels.measures import Outcome, Setting, compare, compare_all, count, numbers_first, worst


def _rows(rows: int, world: int, rank: int) -> tuple[int, int]:
    """(first row, row count) of rank's block: blocks of ⌈R/N⌉ rows, the last short or empty."""
    block = math.ceil(rows / world)
    return rank * block, max(0, min(block, rows - rank * block))


def _trained(s: Setting, world: int) -> tuple[list[torch.Tensor], list[torch.Tensor], list[torch.Tensor]]:
    params, batches = training_setup(s, world)
    return (
        replicated_train(params, batches),
        fsdp1_train(params, batches, world)[0],
        fsdp2_train(params, batches, world)[0],
    )


def _against(s: Setting, which: int) -> Outcome:
    """FSDP2's parameters after training against the replica's (0) or FSDP1's (1), N = 2 and 4."""
    pairs = []
    for world in (2, 4):
        trained = _trained(s, world)
        ref, fsdp2 = trained[which], trained[2]
        pairs += [(f"N={world} {SHAPES[i]}", a, b) for i, (a, b) in enumerate(zip(ref, fsdp2, strict=True))]
    return compare_all(pairs)


@check("fsdp2-vs-fsdp1", 0.0, measure="abs", covers=(UNEVEN_SIZES,))
def matches_fsdp1(s: Setting) -> Outcome:
    """Per-parameter row sharding trains exactly like FSDP1's flat sharding."""
    return _against(s, 1)


@check("fsdp2-vs-replica", 1e-5, covers=(UNEVEN_SIZES,))
def matches_replica(s: Setting) -> Outcome:
    """Per-parameter row sharding trains like the unsharded replica."""
    return _against(s, 0)


@check("grad-shard-is-row-block", 1e-6, gradients=True, covers=(UNEVEN_SIZES,))
def grad_shard_is_row_block(s: Setting) -> Outcome:
    """Each rank's gradient shard is its row block of the mean gradient (⌈R/N⌉ rows, the
    last short or empty), followed by zero padding."""
    pairs = []
    for world in (2, 4):
        params, batches = training_setup(s, world)
        _, _, grad_shards = fsdp2_train(params, batches[:1], world)
        mean = mean_gradient(params, batches[0])
        for i, (p, grads) in enumerate(zip(params, grad_shards, strict=True)):
            for r, g in enumerate(grads):
                first, rows = _rows(p.shape[0], world, r)
                pairs.append((f"N={world} param {i} rank {r}", mean[i][first : first + rows], g[:rows]))
                pairs.append((f"N={world} param {i} rank {r} padding", torch.zeros_like(g[rows:]), g[rows:]))
    return compare_all(pairs)


@check("whole-rows", 0.0, measure="abs", covers=(UNEVEN_SIZES,))
def whole_rows(s: Setting) -> Outcome:
    """Every FSDP2 shard holds whole rows of a single parameter, rank r the rows of its
    block, and gathers back exactly."""
    params, _ = training_setup(s, 4)
    parts: list[Callable[[], Outcome]] = []
    for world in (2, 4):
        for i, p in enumerate(params):
            lay = RowSharded(p.shape, world)
            held = [lay.local_rows(r) for r in range(world)]
            expected = [_rows(p.shape[0], world, r)[1] for r in range(world)]
            parts += [
                partial(count, int(held != expected), 0, f"N={world} param {i}: rows held {held}, expected {expected}"),
                partial(_whole, p, lay, world, i),
            ]
    out = numbers_first(parts, 0.0, "abs")
    flat_cuts = FlatParam(params, 4).rows_cut()
    detail = "every FSDP2 shard holds whole rows of one parameter and round-trips exactly; FSDP1's flat shards cut"
    return Outcome(out.max_abs, out.max_rel, f"{detail} {flat_cuts} rows at N=4; {out.detail}")


def _whole(p: torch.Tensor, lay: RowSharded, world: int, i: int) -> Outcome:
    shards = lay.shard(p)
    return worst(
        [
            count(sum(sh.shape[1:] != p.shape[1:] for sh in shards), 0, f"N={world} param {i}: shards of whole rows"),
            count(sum(sh.shape[0] for sh in shards), world * math.ceil(p.shape[0] / world), f"N={world} padded rows"),
            compare(p, lay.unshard(torch.cat(shards)), f"N={world} param {i}: round trip"),
        ]
    )


VERIFICATION = Verification(
    "fsdp2",
    __doc__ or "",
    (matches_fsdp1, matches_replica, grad_shard_is_row_block, whole_rows),
    shapes=("params " + ", ".join("x".join(map(str, sh)) for sh in SHAPES), f"N=2 and 4 ranks, {STEPS} steps"),
)
