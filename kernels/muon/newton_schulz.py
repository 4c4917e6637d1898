"""Muon's Newton–Schulz orthogonalisation, batched over parameters of the same shape.

Five steps of the quintic iteration with Keller Jordan's coefficients,
    X ← a·X + (b·A + c·A²)·X,  A = X Xᵀ,  (a, b, c) = (3.4445, −4.7750, 2.0315)
from X = G/‖G‖_F (transposed when G has more rows than columns), in bfloat16. It does
not converge to U Vᵀ: it maps every singular value into roughly (0.5, 1.5) while
keeping the singular vectors, which is what the optimizer needs, at the cost of a few
matmuls instead of an SVD. The classic cubic iteration X ← 1.5X − 0.5 X Xᵀ X does
converge to the polar factor and is kept for checking.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import torch
from torch import Tensor

__all__ = ["muon_step", "newton_schulz5", "newton_schulz_cubic"]

COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def newton_schulz5(g: torch.Tensor, steps: int = 5, dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """g: [..., A, B] (a batch of matrices) → approximately orthogonal, same shape and dtype."""
    a, b, c = COEFFICIENTS
    x: torch.Tensor = g.to(dtype)
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    tall = g.shape[-2] > g.shape[-1]
    if tall:
        x = x.mT
    for _ in range(steps):
        A = x @ x.mT
        x = a * x + (b * A + c * A @ A) @ x
    if tall:
        x = x.mT
    return x.to(g.dtype)


def newton_schulz_cubic(g: torch.Tensor, steps: int = 40) -> torch.Tensor:
    x: torch.Tensor = g / g.norm(dim=(-2, -1), keepdim=True)
    for _ in range(steps):
        x = 1.5 * x - 0.5 * x @ x.mT @ x
    return x


def muon_step(
    params: list[Tensor], grads: list[Tensor], bufs: list[Tensor], *, lr: float, momentum: float = 0.95,
    weight_decay: float = 0.1, orthogonalize: Callable[[Tensor], Tensor] = newton_schulz5,
) -> None:
    """The same update as ``naive_muon_step``, with parameters of equal shape stacked and
    orthogonalised in one batched call."""
    groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for i, p in enumerate(params):
        groups[tuple(p.shape)].append(i)
    for shape, idx in groups.items():
        g = torch.stack([grads[i] for i in idx])
        buf = torch.stack([bufs[i] for i in idx]).mul_(momentum).add_(g)
        update = orthogonalize(g + momentum * buf)
        scale = 0.2 * max(shape) ** 0.5
        for j, i in enumerate(idx):
            bufs[i].copy_(buf[j])
            params[i].mul_(1 - lr * weight_decay).add_(update[j], alpha=-lr * scale)
