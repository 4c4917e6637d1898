"""Triton: a fused softmax and a tiled matmul, checked under the CPU interpreter."""

from __future__ import annotations

from kernels.triton_lang.kernels import matmul, softmax

__all__ = ["matmul", "softmax"]
