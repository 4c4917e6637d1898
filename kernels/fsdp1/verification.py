"""Declared verification of FSDP1 flat-parameter sharding.

Compared: training with flat element-wise shards (all-gather, reduce-scatter, sharded
Adam) on simulated ranks against one replica on all microbatches. Properties: gathering
the shards and dropping the padding gives back every parameter exactly; each rank's
gradient shard is its slice of the mean gradient.
"""

from __future__ import annotations

import torch

from kernels.checks import Check, Outcome, Setting, Verification, compare, compare_all, count, worst
from kernels.fsdp1.flat import FlatParam, fsdp1_train
from kernels.fsdp1.model import SHAPES, init_params, loss, microbatches
from kernels.fsdp1.naive import replicated_train

STEPS = 3


def training_setup(s: Setting, world: int) -> tuple[list[torch.Tensor], list[list[torch.Tensor]]]:
    """Initial parameters and, for each of the STEPS steps, one microbatch per rank."""
    gen = s.generator(world)
    params = [p.to(s.device) for p in init_params(gen)]
    return params, [[x.to(s.device) for x in step] for step in microbatches(world, STEPS, gen)]


def mean_gradient(params: list[torch.Tensor], per_rank: list[torch.Tensor]) -> list[torch.Tensor]:
    """The gradient of the loss averaged over the ranks' microbatches: what the sharded
    gradients must add up to."""
    leaves = [p.clone().requires_grad_() for p in params]
    mean = [torch.zeros_like(p) for p in params]
    for x in per_rank:
        for acc, g in zip(mean, torch.autograd.grad(loss(leaves, x), leaves), strict=True):
            acc += g / len(per_rank)
    return mean


def round_trip(s: Setting) -> Outcome:
    results = []
    for world in (2, 3, 4):
        params, _ = training_setup(s, world)
        flat = FlatParam(params, world)
        back = flat.unshard(torch.cat(flat.shard(params)))
        results.append(
            compare_all([(f"N={world} param {i}", p, b) for i, (p, b) in enumerate(zip(params, back, strict=True))])
        )
        results.append(count(flat.shard_size * world - flat.numel, (-flat.numel) % world, f"N={world} padding"))
    return worst(results, "all_gather(shards)[:numel] viewed back equals every parameter")


def grad_shard_is_slice(s: Setting) -> Outcome:
    params, batches = training_setup(s, 4)
    _, flat, grad_shards = fsdp1_train(params, batches[:1], 4)
    return compare(
        flat.flatten(mean_gradient(params, batches[0])),
        torch.cat(grad_shards),
        f"concatenated gradient shards vs flattened mean gradient ({flat.rows_cut()} rows cut by shard boundaries)",
    )


def training_matches(s: Setting) -> Outcome:
    results = []
    for world in (2, 4):
        params, batches = training_setup(s, world)
        ref = replicated_train(params, batches)
        got, _, _ = fsdp1_train(params, batches, world)
        results.append(
            compare_all(
                [(f"N={world} {tuple(SHAPES[i])}", a, b) for i, (a, b) in enumerate(zip(ref, got, strict=True))]
            )
        )
    return worst(results)


VERIFICATION = Verification(
    technique="fsdp1",
    compares="flat-parameter element-wise sharding (all-gather, reduce-scatter, sharded Adam) "
    "on simulated "
    "ranks against one replica training on all microbatches",
    shapes=(
        "params " + ", ".join("x".join(map(str, sh)) for sh in SHAPES),
        f"N=2, 3, 4 ranks, {STEPS} steps",
    ),
    gradients=True,
    checks=(
        Check(
            "round-trip",
            "all_gather(shards)[:numel] viewed back gives every parameter exactly.",
            round_trip,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "grad-shard-is-slice",
            "Each rank's gradient shard is its slice of the mean gradient.",
            grad_shard_is_slice,
            tolerance=1e-6,
            gradients=True,
        ),
        Check(
            "training-matches-replica",
            "Three sharded training steps equal unsharded data-parallel training.",
            training_matches,
            tolerance=1e-5,
        ),
    ),
)
