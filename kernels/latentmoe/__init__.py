"""LatentMoE: routed experts in a latent space, a shared expert at full width."""

from __future__ import annotations

from kernels.latentmoe.grouped import latent_moe
from kernels.latentmoe.layer import LatentMoE, init_latentmoe

__all__ = ["LatentMoE", "init_latentmoe", "latent_moe"]
