"""Full multi-head attention: the blockwise online-softmax form; the row loop is in ``naive``."""

from __future__ import annotations

from kernels.transformer.blockwise import blockwise_attention

__all__ = ["blockwise_attention"]
