"""Fake quantisation through PyTorch's fused operators: the structured form the naive
straight-through estimator is checked against (``torch.fake_quantize_per_tensor_affine``
and ``torch.fake_quantize_per_channel_affine``, whose backward masks out-of-range
values)."""

from __future__ import annotations

import torch

__all__ = ["fake_quant"]


def fake_quant(
    x: torch.Tensor,
    scale: torch.Tensor | float,
    zero_point: torch.Tensor | int,
    q_min: int,
    q_max: int,
    axis: int | None = None,
) -> torch.Tensor:
    if axis is None:
        return torch.fake_quantize_per_tensor_affine(x, float(scale), int(zero_point), q_min, q_max)
    s = torch.as_tensor(scale, dtype=torch.float32, device=x.device)
    z = torch.as_tensor(zero_point, dtype=torch.int32, device=x.device)
    return torch.fake_quantize_per_channel_affine(x, s, z, axis, q_min, q_max)
