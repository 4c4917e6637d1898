"""The unsharded reference: a two-layer MLP Y = GeLU(X Aᵀ) Bᵀ + b on one device."""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["mlp"]


def mlp(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x [T, d]; a [h, d] (first layer); b [d, h] (second layer); bias [d]."""
    return F.gelu(x @ a.T) @ b.T + bias
