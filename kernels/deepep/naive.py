"""The expert-parallel MoE reference: every token, every chosen expert, on one device
(the token loop of ``kernels.hpc_ops.naive``)."""

from __future__ import annotations

from kernels.hpc_ops.naive import naive_moe

__all__ = ["naive_moe"]
