"""Liger-style fused operations: chunked linear cross-entropy, RMSNorm, RoPE, SwiGLU."""

from __future__ import annotations

from kernels.liger_kernel.fused import fused_linear_cross_entropy, rmsnorm, rope, swiglu

__all__ = ["fused_linear_cross_entropy", "rmsnorm", "rope", "swiglu"]
