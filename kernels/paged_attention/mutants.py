"""Bugs a person makes in PagedAttention's block pool and gather."""

from __future__ import annotations

from kernels.mutation import Mutant

_DECODE = "kernels.paged_attention.paged:paged_decode"

MUTANTS = (
    Mutant(
        "slot-from-block-index",
        "the slot inside a block is computed with // instead of %",
        _DECODE,
        "slots = (j % bs).expand(N, -1)",
        "slots = (j // bs).expand(N, -1)",
        "paged-vs-contiguous",
    ),
    Mutant(
        "length-mask-off-by-one",
        "the length mask lets each sequence attend one slot past its last token",
        _DECODE,
        "(j[None, :] >= lengths[:, None])",
        "(j[None, :] > lengths[:, None])",
        "paged-vs-contiguous",
    ),
    Mutant(
        "allocates-a-token-early",
        "a new block is allocated when the last slot of the current one is written, not when "
        "the first slot of the next one is",
        "kernels.paged_attention.paged:BlockPool.append",
        "if j % self.block_size == 0:",
        "if len(self.tables[seq]) * self.block_size <= j + 1:",
        "blocks-and-waste",
    ),
    Mutant(
        "missing-scale",
        "the scores are not scaled by 1/sqrt(d)",
        _DECODE,
        'k) * D**-0.5',
        'k)',
        "paged-vs-contiguous",
    ),
    Mutant(
        "waste-of-a-full-block",
        "the wasted slots are computed as bs − L mod bs, which reports a whole block wasted when a "
        "sequence exactly fills its last block",
        "kernels.paged_attention.paged:BlockPool.wasted_slots",
        "return len(self.tables[seq]) * self.block_size - self.lengths[seq]",
        "return self.block_size - self.lengths[seq] % self.block_size",
        "blocks-and-waste",
        kind="expected-value",
    ),
)
