"""SpecForge: EAGLE-3 draft loss and law-preserving speculative sampling."""

from __future__ import annotations

from kernels.specforge.draft import TTT_STEPS, draft_loss, speculative_sample

__all__ = ["TTT_STEPS", "draft_loss", "speculative_sample"]
