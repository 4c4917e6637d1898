"""Expert Choice routing: experts pick their top-k tokens."""

from __future__ import annotations

from kernels.expert_choice.batched import expert_choice, tokens_per_expert

__all__ = ["expert_choice", "tokens_per_expert"]
