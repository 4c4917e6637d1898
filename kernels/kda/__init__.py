"""Kimi Delta Attention: the chunkwise form; the token loop is in ``naive``."""

from __future__ import annotations

from kernels.kda.chunk import chunk_kda

__all__ = ["chunk_kda"]
