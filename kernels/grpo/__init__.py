"""GRPO: group-relative advantages and the clipped token loss."""

from __future__ import annotations

from kernels.grpo.batched import grpo_advantages, grpo_loss

__all__ = ["grpo_advantages", "grpo_loss"]
