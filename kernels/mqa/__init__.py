"""Multi-query attention: one shared KV head broadcast to every query head."""

from __future__ import annotations

from kernels.mqa.shared import mqa_attention

__all__ = ["mqa_attention"]
