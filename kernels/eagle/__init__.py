"""EAGLE: speculative decoding with a draft that autoregresses over the target's features."""

from __future__ import annotations

from kernels.eagle.model import EagleHead, TinyLM
from kernels.eagle.speculative import Decoded, eagle_decode

__all__ = ["Decoded", "EagleHead", "TinyLM", "eagle_decode"]
