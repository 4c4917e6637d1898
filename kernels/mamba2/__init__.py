"""Mamba2 (state-space duality): the chunked form; the token loop is in ``naive``."""

from __future__ import annotations

from kernels.mamba2.ssd import chunk_ssd

__all__ = ["chunk_ssd"]
