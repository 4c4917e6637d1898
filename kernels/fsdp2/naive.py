"""The unsharded reference for FSDP2 is the same replica as FSDP1's: one copy of every
parameter trained on all microbatches with the averaged gradient."""

from __future__ import annotations

from kernels.fsdp1.naive import replicated_train

__all__ = ["replicated_train"]
