"""Bugs a person makes in Triton kernels and their launch."""

from __future__ import annotations

from kernels.mutation import Mutant

_SOURCE = "kernels.triton_lang.source"

MUTANTS = (
    Mutant(
        "masked-lanes-load-zero",
        "the lanes past the row end load 0 instead of -inf, so they add e^(0 - max) to the sum",
        f"{_SOURCE}:softmax_kernel",
        'other=-float("inf")',
        "other=0.0",
        "softmax",
    ),
    Mutant(
        "overwrite-accumulator",
        "the matmul tile is assigned instead of accumulated over the K blocks",
        f"{_SOURCE}:matmul_kernel",
        'acc += tl.dot(a, b, input_precision="ieee")',
        'acc = tl.dot(a, b, input_precision="ieee")',
        "matmul",
    ),
    Mutant(
        "k-mask-drops-last-column",
        "the K mask of the a tile is off by one and zeroes the last column of a",
        f"{_SOURCE}:matmul_kernel",
        "mask=(rm[:, None] < M) & (rk[None, :] < K),",
        "mask=(rm[:, None] < M) & (rk[None, :] < K - 1),",
        "matmul",
    ),
    Mutant(
        "grid-rounds-down",
        "the launch grid divides the sizes rounding down, so the edge tiles are never computed",
        "kernels.triton_lang.kernels:matmul",
        "grid = (-(-M // block), -(-N // block))",
        "grid = (M // block, N // block)",
        "matmul",
    ),
)
