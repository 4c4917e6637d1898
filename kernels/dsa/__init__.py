"""DeepSeek Sparse Attention: lightning indexer, top-k selection, masked attention."""

from __future__ import annotations

from kernels.dsa.sparse import dsa_attention, lightning_indexer, topk_mask

__all__ = ["dsa_attention", "lightning_indexer", "topk_mask"]
