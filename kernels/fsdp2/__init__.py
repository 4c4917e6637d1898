"""PyTorch FSDP2: per-parameter Shard(0) row sharding."""

from __future__ import annotations

from kernels.fsdp2.per_param import RowSharded, fsdp2_train

__all__ = ["RowSharded", "fsdp2_train"]
