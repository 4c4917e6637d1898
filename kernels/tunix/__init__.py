"""Tunix-style agentic RL: a tool-using rollout and a loss mask over model tokens."""

from __future__ import annotations

from kernels.tunix.masked import episode_loss, loss_mask, policy_loss
from kernels.tunix.rollout import rollout

__all__ = ["episode_loss", "loss_mask", "policy_loss", "rollout"]
