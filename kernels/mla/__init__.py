"""Multi-head latent attention: weight-absorbed decoding over a latent cache."""

from __future__ import annotations

from kernels.mla.absorbed import absorbed_decode, cache_elements_per_token
from kernels.mla.config import DEEPSEEK_V2, MLAConfig

__all__ = ["DEEPSEEK_V2", "MLAConfig", "absorbed_decode", "cache_elements_per_token"]
