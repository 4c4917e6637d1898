"""Declared verification of PagedAttention.

Compared: decode attention gathered through block tables against attention over each
sequence's contiguous keys and values. Properties: the output does not change when the
physical blocks are handed out in another order; each sequence owns ⌈L/bs⌉ blocks and
wastes fewer than bs slots.
"""

from __future__ import annotations

import math

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare,
    count,
    within,
    worst,
)
from kernels.paged_attention.naive import contiguous_decode
from kernels.paged_attention.paged import BlockPool, paged_decode

LENGTHS = (1, 15, 16, 17, 45, 100)  # tokens per sequence: around and between block boundaries
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


def paged_matches_contiguous(s: Setting) -> Outcome:
    pool, keys, values, q = _fill(s)
    return compare(contiguous_decode(q, keys, values), paged_decode(q, pool))


def block_permutation_invariance(s: Setting) -> Outcome:
    pool, _, _, q = _fill(s)
    shuffled = torch.randperm(pool.num_blocks, generator=s.generator(1)).tolist()
    other, _, _, _ = _fill(s, order=shuffled)
    return compare(
        paged_decode(q, pool),
        paged_decode(q, other),
        "outputs with blocks handed out in order vs in a random order",
    )


def blocks_and_waste(s: Setting) -> Outcome:
    pool, _, _, _ = _fill(s)
    results = []
    for i, n in enumerate(LENGTHS):
        results.append(count(len(pool.tables[i]), math.ceil(n / BLOCK), f"L={n}: blocks"))
        results.append(within(pool.wasted_slots(i), BLOCK - 1, f"L={n}: {pool.wasted_slots(i)} wasted slots"))
    worst_waste = max(pool.wasted_slots(i) for i in range(len(LENGTHS)))
    return worst(results, f"⌈L/bs⌉ blocks for every sequence; most wasted slots {worst_waste} < bs = {BLOCK}")


VERIFICATION = Verification(
    technique="paged-attention",
    compares="decode attention gathered through per-sequence block tables against attention over "
    "contiguous keys and values",
    shapes=tuple(f"L{n}-bs{BLOCK}-H{H}-D{D}" for n in LENGTHS),
    checks=(
        Check(
            "paged-vs-contiguous",
            "Attention through the block table equals attention over the contiguous cache.",
            paged_matches_contiguous,
            tolerance=1e-5,
        ),
        Check(
            "block-permutation",
            "The output does not change when the physical blocks are permuted.",
            block_permutation_invariance,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "blocks-and-waste",
            "A sequence of L tokens holds ceil(L/bs) blocks and wastes fewer than bs slots.",
            blocks_and_waste,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
