"""veScale-FSDP: the RaggedShard placement."""

from __future__ import annotations

from kernels.vescale_fsdp.ragged import RaggedShard

__all__ = ["RaggedShard"]
