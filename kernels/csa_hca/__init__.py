"""DeepSeek-V4 CSA / HCA: gated pooling of KV windows into compressed entries."""

from __future__ import annotations

from kernels.csa_hca.pool import StreamingCompressor, attend_compressed, compress

__all__ = ["StreamingCompressor", "attend_compressed", "compress"]
