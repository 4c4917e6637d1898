"""Gated DeltaNet: the chunkwise (WY) form; the token loop is in ``naive``."""

from __future__ import annotations

from kernels.gated_deltanet.chunk import chunk_gated_delta_rule

__all__ = ["chunk_gated_delta_rule"]
