"""Sparsely-gated MoE: noisy top-k gating."""

from __future__ import annotations

from kernels.sparsely_gated_moe.gating import noisy_topk_gates, noisy_topk_moe

__all__ = ["noisy_topk_gates", "noisy_topk_moe"]
