"""Declared verification of FSDP2 per-parameter Shard(0) sharding.

Compared: per-parameter row sharding against FSDP1's flat element-wise sharding and
against unsharded training: the same parameters after three steps. Properties: each
rank's gradient shard is its row block of the mean gradient; every local shard holds
whole rows (none straddles parameters), unlike FSDP1's flat shards.
"""

from __future__ import annotations

import torch

from kernels.checks import Check, Outcome, Setting, Verification, compare_all, count, worst
from kernels.fsdp1.flat import FlatParam, fsdp1_train
from kernels.fsdp1.model import SHAPES
from kernels.fsdp1.verification import STEPS, mean_gradient, training_setup
from kernels.fsdp2.naive import replicated_train
from kernels.fsdp2.per_param import RowSharded, fsdp2_train


def matches_fsdp1_and_replica(s: Setting) -> Outcome:
    results = []
    for world in (2, 4):
        params, batches = training_setup(s, world)
        ref = replicated_train(params, batches)
        one, _, _ = fsdp1_train(params, batches, world)
        two, _, _ = fsdp2_train(params, batches, world)
        results.append(
            compare_all(
                [
                    (f"N={world} FSDP2 vs FSDP1 {tuple(SHAPES[i])}", a, b)
                    for i, (a, b) in enumerate(zip(one, two, strict=True))
                ]
                + [
                    (f"N={world} FSDP2 vs replica {tuple(SHAPES[i])}", a, b)
                    for i, (a, b) in enumerate(zip(ref, two, strict=True))
                ]
            )
        )
    return worst(results)


def grad_shard_is_row_block(s: Setting) -> Outcome:
    world = 4
    params, batches = training_setup(s, world)
    _, layouts, grad_shards = fsdp2_train(params, batches[:1], world)
    mean = mean_gradient(params, batches[0])
    pairs = []
    for i, (lay, grads) in enumerate(zip(layouts, grad_shards, strict=True)):
        for r, g in enumerate(grads):
            rows = lay.local_rows(r)
            pairs.append((f"param {i} rank {r}", mean[i][r * lay.block : r * lay.block + rows], g[:rows]))
    return compare_all(pairs)


def whole_rows(s: Setting) -> Outcome:
    params, _ = training_setup(s, 4)
    results = []
    for world in (2, 4):
        layouts = [RowSharded(p.shape, world) for p in params]
        round_trip = compare_all(
            [
                (f"N={world} {i}", p, lay.unshard(torch.cat(lay.shard(p))))
                for i, (p, lay) in enumerate(zip(params, layouts, strict=True))
            ]
        )
        results.append(round_trip)
        for p, lay in zip(params, layouts, strict=True):
            shards = lay.shard(p)
            results.append(count(sum(sh.shape[1:] != p.shape[1:] for sh in shards), 0, "shards of whole rows"))
    flat_cuts = FlatParam(params, 4).rows_cut()
    out = worst(results)
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"every FSDP2 shard holds whole rows of one parameter and round-"
        f"trips exactly; FSDP1's flat shards cut {flat_cuts} rows at N=4",
    )


VERIFICATION = Verification(
    technique="fsdp2",
    compares="per-parameter Shard(0) row sharding against FSDP1 flat element-wise sharding and "
    "against "
    "unsharded training (parameters after 3 steps)",
    shapes=(
        "params " + ", ".join("x".join(map(str, sh)) for sh in SHAPES),
        f"N=2 and 4 ranks, {STEPS} steps",
    ),
    gradients=True,
    checks=(
        Check(
            "fsdp2-vs-fsdp1",
            "Per-parameter row sharding trains exactly like FSDP1's flat sharding and like the unsharded replica.",
            matches_fsdp1_and_replica,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "grad-shard-is-row-block",
            "Each rank's gradient shard is its row block of the mean gradient.",
            grad_shard_is_row_block,
            tolerance=1e-6,
            gradients=True,
        ),
        Check(
            "whole-rows",
            "Every FSDP2 shard holds whole rows of a single parameter and gathers back exactly.",
            whole_rows,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
