"""Declared verification of PagedAttention.

Compared: decode attention gathered through block tables against attention over each
sequence's contiguous keys and values. Properties: the output does not change when the
physical blocks are handed out in another order; each sequence owns ⌈L/bs⌉ blocks and
wastes fewer than bs slots.
"""

from __future__ import annotations

import math

import torch

from kernels.checks import Verification, check
from kernels.families import BATCH_OF_ONE, UNEVEN_SIZES
from kernels.measures import Outcome, Setting, compare, count, within, worst
from kernels.paged_attention.naive import contiguous_decode
from kernels.paged_attention.paged import BlockPool, paged_decode

#: tokens per sequence: around and between block boundaries (17: one past a block; 1: a lone token)
LENGTHS = (1, 15, 16, 17, 45, 100)
BLOCK, H, D = 16, 3, 24


def _fill(
    s: Setting, order: list[int] | None = None
) -> tuple[BlockPool, list[torch.Tensor], list[torch.Tensor], torch.Tensor]:
    gen = s.generator(0)
    keys = [s.randn(n, H, D, gen=gen) for n in LENGTHS]
    values = [s.randn(n, H, D, gen=gen) for n in LENGTHS]
    q = s.randn(len(LENGTHS), H, D, gen=gen)
    needed = sum(math.ceil(n / BLOCK) for n in LENGTHS)
    pool = BlockPool(needed + 3, BLOCK, H, D, device=s.device, dtype=s.dtype, order=order)
    seqs = [pool.add_sequence() for _ in LENGTHS]
    # Interleave the sequences' growth, as concurrent requests would.
    for t in range(max(LENGTHS)):
        for i, n in zip(seqs, LENGTHS, strict=True):
            if t < n:
                pool.append(i, keys[i][t], values[i][t])
    return pool, keys, values, q


@check("paged-vs-contiguous", 1e-5, covers=(UNEVEN_SIZES, BATCH_OF_ONE))
def paged_matches_contiguous(s: Setting) -> Outcome:
    """Attention through the block table equals attention over the contiguous cache."""
    pool, keys, values, q = _fill(s)
    return compare(contiguous_decode(q, keys, values), paged_decode(q, pool))


@check("block-permutation", 0.0, measure="abs")
def block_permutation_invariance(s: Setting) -> Outcome:
    """The output does not change when the physical blocks are permuted."""
    pool, _, _, q = _fill(s)
    shuffled = torch.randperm(pool.num_blocks, generator=s.generator(1)).tolist()
    other, _, _, _ = _fill(s, order=shuffled)
    return compare(
        paged_decode(q, pool),
        paged_decode(q, other),
        "outputs with blocks handed out in order vs in a random order",
    )


@check("blocks-and-waste", 0.0, measure="abs", covers=(UNEVEN_SIZES, BATCH_OF_ONE))
def blocks_and_waste(s: Setting) -> Outcome:
    """A sequence of L tokens holds ceil(L/bs) blocks and wastes fewer than bs slots."""
    pool, _, _, _ = _fill(s)
    results = []
    for i, n in enumerate(LENGTHS):
        blocks = math.ceil(n / BLOCK)
        waste = blocks * BLOCK - n
        results.append(count(len(pool.tables[i]), blocks, f"L={n}: blocks"))
        results.append(count(pool.wasted_slots(i), waste, f"L={n}: {pool.wasted_slots(i)} wasted slots reported"))
        results.append(within(len(pool.tables[i]) * BLOCK - n, BLOCK - 1, f"L={n}: slots past the last token"))
    return worst(results, f"⌈L/bs⌉ blocks for every sequence; waste ⌈L/bs⌉·bs − L < bs = {BLOCK}")


VERIFICATION = Verification(
    "paged-attention",
    __doc__ or "",
    (paged_matches_contiguous, block_permutation_invariance, blocks_and_waste),
    shapes=tuple(f"L{n}-bs{BLOCK}-H{H}-D{D}" for n in LENGTHS),
)
