"""Megatron tensor parallelism: column- and row-parallel linear layers with f/g operators."""

from __future__ import annotations

from kernels.megatron_tp.sharded import column_linear, row_linear, shard_mlp, tp_mlp

__all__ = ["column_linear", "row_linear", "shard_mlp", "tp_mlp"]
