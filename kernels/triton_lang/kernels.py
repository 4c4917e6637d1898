"""Two Triton kernels, a fused row softmax and a tiled matmul, runnable anywhere.

On a GPU they compile as usual. On the CPU they run in Triton's interpreter
(``TRITON_INTERPRET=1``), which executes the same kernel source block by block with
numpy, so the kernel logic (program ids, masks for sizes that are not multiples of
the block, the accumulation loop) is checked without a GPU. ``triton.jit`` reads the
mode when it wraps a function, so each mode gets its own wrapped copy.

Triton is an optional dependency: ``pip install 'techkg[triton]'``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import torch

__all__ = ["interpreting", "matmul", "softmax"]


@contextmanager
def _mode(interpret: bool) -> Iterator[None]:
    """Triton reads TRITON_INTERPRET both when it wraps a kernel and when it launches one."""
    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1" if interpret else "0"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = previous


def interpreting() -> bool:
    """True when Triton, as imported in this process, runs kernels in its CPU interpreter."""
    import triton.language as tl

    return type(tl.max).__name__ == "InterpretedFunction"


@cache
def _compiled(interpret: bool) -> tuple[Any, Any]:
    """The jitted kernels. Triton fixes the interpreter mode of its own library when it is
    first imported, so the mode is set before that import and checked after it."""
    with _mode(interpret):
        import triton

        if interpreting() != interpret:
            from kg.errors import KernelError

            raise KernelError(
                f"Triton was already imported {'without' if interpret else 'with'} "
                "TRITON_INTERPRET=1 "
                f"in this process, so it cannot {'interpret' if interpret else 'compile'} "
                "kernels now",
                hint="Run the Triton check in a fresh process, or set TRITON_INTERPRET=1 before "
                "starting "
                "it (CPU) / leave it unset (GPU).",
            )
        from kernels.triton_lang import source

        return triton.jit(source.softmax_kernel), triton.jit(source.matmul_kernel)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Row softmax of a 2-D float32 tensor, one program per row."""
    interpret = x.device.type != "cuda"
    kernel, _ = _compiled(interpret)
    x = x.contiguous()
    out = torch.empty_like(x)
    with _mode(interpret):
        kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=_next_pow2(x.shape[1]))
    return out


def matmul(a: torch.Tensor, b: torch.Tensor, block: int = 16) -> torch.Tensor:
    """a [M, K] @ b [K, N] in float32, one program per output tile of block × block."""
    interpret = a.device.type != "cuda"
    _, kernel = _compiled(interpret)
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, dtype=torch.float32, device=a.device)
    grid = (-(-M // block), -(-N // block))
    with _mode(interpret):
        kernel[grid](
            a,
            b,
            c,
            M,
            N,
            K,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            BM=block,
            BN=block,
            BK=block,
        )
    return c
