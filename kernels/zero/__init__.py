"""ZeRO stages 1-3 on simulated ranks, and the per-rank memory formula."""

from __future__ import annotations

from kernels.zero.sharded import zero_bytes, zero_train

__all__ = ["zero_bytes", "zero_train"]
