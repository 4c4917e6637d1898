"""Declared verification of FSDP1 flat-parameter sharding.

Compared: training with flat element-wise shards (all-gather, reduce-scatter, sharded
Adam) on simulated ranks against one replica on all microbatches (with its own Adam).
Properties: gathering the shards and dropping the padding gives back every parameter
exactly; each rank holds ⌈Ψ/N⌉ elements and the padding is N·⌈Ψ/N⌉ − Ψ (Ψ = 73 leaves one
element over 2, 3 and 4 ranks; worked out here); each rank's gradient shard is its slice
of the mean gradient, flattened and padded here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from kernels.checks import Verification, check
from kernels.families import UNEVEN_SIZES
from kernels.fsdp1.flat import FlatParam, fsdp1_train
from kernels.fsdp1.model import SHAPES, init_params, loss, microbatches
from kernels.fsdp1.naive import replicated_train
from kernels.measures import Outcome, Setting, compare, compare_all, count, numbers_first, worst

STEPS = 3
#: Ψ = 73 elements over 2, 3 and 4 ranks: a remainder of one element each time.
WORLDS = (2, 3, 4)


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


@check("round-trip", 0.0, measure="abs", covers=(UNEVEN_SIZES,))
def round_trip(s: Setting) -> Outcome:
    """all_gather(shards)[:numel] viewed back gives every parameter exactly, and every
    shard holds ⌈Ψ/N⌉ elements, N·⌈Ψ/N⌉ − Ψ of them padding."""
    parts: list[Callable[[], Outcome]] = []
    for world in WORLDS:
        params, _ = training_setup(s, world)
        psi = sum(p.numel() for p in params)
        flat = FlatParam(params, world)
        shards = flat.shard(params)
        sizes = [sh.numel() for sh in shards]
        parts += [
            partial(count, sum(abs(n - math.ceil(psi / world)) for n in sizes), 0, f"N={world} shard sizes {sizes}"),
            partial(count, sum(sizes) - psi, world * math.ceil(psi / world) - psi, f"N={world} padding"),
            partial(_round_trip, params, flat, shards, world),
        ]
    return numbers_first(parts, 0.0, "abs")


def _round_trip(params: list[torch.Tensor], flat: FlatParam, shards: list[torch.Tensor], world: int) -> Outcome:
    back = flat.unshard(torch.cat(shards))
    return compare_all([(f"N={world} param {i}", p, b) for i, (p, b) in enumerate(zip(params, back, strict=True))])


@check("grad-shard-is-slice", 1e-6, gradients=True, covers=(UNEVEN_SIZES,))
def grad_shard_is_slice(s: Setting) -> Outcome:
    """Each rank's gradient shard is its slice of the mean gradient."""
    results = []
    for world in WORLDS:
        params, batches = training_setup(s, world)
        _, flat, grad_shards = fsdp1_train(params, batches[:1], world)
        mean = torch.cat([g.flatten() for g in mean_gradient(params, batches[0])])
        padded = F.pad(mean, (0, world * math.ceil(mean.numel() / world) - mean.numel()))
        detail = f"N={world}: gradient shards vs the padded mean gradient ({flat.rows_cut()} rows cut by shards)"
        results.append(compare(padded, torch.cat(grad_shards), detail))
    return worst(results)


@check("training-matches-replica", 1e-5, covers=(UNEVEN_SIZES,))
def training_matches(s: Setting) -> Outcome:
    """Three sharded training steps equal unsharded data-parallel training."""
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
    "fsdp1",
    __doc__ or "",
    (round_trip, grad_shard_is_slice, training_matches),
    shapes=("params " + ", ".join("x".join(map(str, sh)) for sh in SHAPES), f"N=2, 3, 4 ranks, {STEPS} steps"),
)
