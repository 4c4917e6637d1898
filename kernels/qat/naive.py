"""Fake quantisation for quantisation-aware training, written out by hand.

Forward: snap x to the integer grid of an affine quantiser and back,
    x̂ = (clamp(round(x/s) + z, q_min, q_max) − z) · s
Backward (straight-through estimator): pass the gradient through unchanged where the
value fell inside the range, and block it where it was clamped. The trick
``x·m + (x̂ − x·m).detach()`` has the value x̂ and the gradient m (the range mask).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["fake_quant_ste"]


def fake_quant_ste(
    x: torch.Tensor,
    scale: torch.Tensor | float | Sequence[float],
    zero_point: torch.Tensor | int | Sequence[int],
    q_min: int,
    q_max: int,
    axis: int | None = None,
) -> torch.Tensor:
    """Per-tensor (scalar scale) or per-channel (``axis``: scale, zero_point of that length)."""
    s = torch.as_tensor(scale, dtype=x.dtype, device=x.device)
    z = torch.as_tensor(zero_point, device=x.device)
    if axis is not None:
        shape = [1] * x.dim()
        shape[axis] = -1
        s, z = s.view(shape), z.view(shape)
    # x · (1/s) rather than x / s: the fused operators multiply by the inverse scale,
    # and the two can round differently for values exactly between two levels.
    level = torch.round(x * (1.0 / s)) + z
    inside = ((level >= q_min) & (level <= q_max)).to(x.dtype)
    snapped = (level.clamp(q_min, q_max) - z) * s
    return x * inside + (snapped - x * inside).detach()
