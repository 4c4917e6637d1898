"""PPO: generalised advantage estimation and the clipped surrogate."""

from __future__ import annotations

from kernels.ppo.vectorized import clipped_loss, gae

__all__ = ["clipped_loss", "gae"]
