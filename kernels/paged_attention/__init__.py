"""PagedAttention: a block pool with per-sequence block tables and a gathering decode."""

from __future__ import annotations

from kernels.paged_attention.paged import BlockPool, paged_decode

__all__ = ["BlockPool", "paged_decode"]
