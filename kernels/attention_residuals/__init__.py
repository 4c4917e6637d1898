"""Attention Residuals: softmax over depth instead of a fixed residual sum."""

from __future__ import annotations

from kernels.attention_residuals.fused import attnres, block_forward, full_forward

__all__ = ["attnres", "block_forward", "full_forward"]
