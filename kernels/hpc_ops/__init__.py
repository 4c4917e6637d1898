"""HPC-Ops-style fused MoE: permute, grouped GEMM, unpermute."""

from __future__ import annotations

from kernels.hpc_ops.fused import fused_moe, permute, unpermute

__all__ = ["fused_moe", "permute", "unpermute"]
