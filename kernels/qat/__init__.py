"""Quantisation-aware training: fake quantisation with a straight-through estimator."""

from __future__ import annotations

from kernels.qat.builtin import fake_quant
from kernels.qat.naive import fake_quant_ste

__all__ = ["fake_quant", "fake_quant_ste"]
