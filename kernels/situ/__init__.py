"""SiTU-GLU: the fused ``situ_and_mul`` with a hand-written backward."""

from __future__ import annotations

from kernels.situ.fused import situ_and_mul

__all__ = ["situ_and_mul"]
