"""DeltaNet: the chunkwise form; the token loop is in ``naive``."""

from __future__ import annotations

from kernels.deltanet.chunk import chunk_delta_rule

__all__ = ["chunk_delta_rule"]
