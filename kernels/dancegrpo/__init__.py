"""DanceGRPO: GRPO over the denoising steps of a flow model run as an SDE."""

from __future__ import annotations

from kernels.dancegrpo.sde import advantages, clipped_loss, sde_step, step_logprob

__all__ = ["advantages", "clipped_loss", "sde_step", "step_logprob"]
