"""PyTorch FSDP1: flat-parameter, element-wise sharding."""

from __future__ import annotations

from kernels.fsdp1.flat import FlatParam, fsdp1_train

__all__ = ["FlatParam", "fsdp1_train"]
