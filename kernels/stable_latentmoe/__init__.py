"""Stable LatentMoE (Kimi K3): latent SiTU experts, RMSNorm after the sum, shared experts."""

from __future__ import annotations

from kernels.stable_latentmoe.grouped import stable_latentmoe
from kernels.stable_latentmoe.layer import K3, StableConfig, init_stable

__all__ = ["K3", "StableConfig", "init_stable", "stable_latentmoe"]
