"""Grouped-query attention: the grouped einsum and the MHA → GQA conversion."""

from __future__ import annotations

from kernels.gqa.grouped import grouped_attention, mha_to_gqa

__all__ = ["grouped_attention", "mha_to_gqa"]
