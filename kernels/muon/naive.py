"""Muon, the obvious way: the orthogonal polar factor from an SVD, and an optimizer that
walks the parameters one at a time.

Update of a 2-D parameter p (A×B) with gradient g, Moonlight's form:
    buf ← μ·buf + g;   g′ = g + μ·buf (Nesterov)
    O = polar(g′) = U Vᵀ  (g′ = U S Vᵀ)
    p ← p·(1 − lr·wd) − lr · 0.2·√max(A, B) · O
The 0.2·√max(A, B) factor makes RMS(update) = 0.2·lr, matching AdamW's; weight decay
uses the unadjusted lr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import torch
from torch import Tensor

__all__ = ["naive_muon_step", "polar_svd", "quintic_spectral"]


def polar_svd(g: torch.Tensor) -> torch.Tensor:
    u, _, vh = torch.linalg.svd(g.double(), full_matrices=False)
    return cast(torch.Tensor, (u @ vh).to(g.dtype))


def naive_muon_step(
    params: list[Tensor], grads: list[Tensor], bufs: list[Tensor], *, lr: float, momentum: float = 0.95,
    weight_decay: float = 0.1, orthogonalize: Callable[[Tensor], Tensor] = polar_svd,
) -> None:
    """Update ``params`` and ``bufs`` in place, one parameter at a time."""
    for p, g, buf in zip(params, grads, bufs, strict=True):
        buf.mul_(momentum).add_(g)
        update = orthogonalize(g + momentum * buf)
        scale = 0.2 * max(p.shape) ** 0.5
        p.mul_(1 - lr * weight_decay).add_(update, alpha=-lr * scale)


def quintic_spectral(g: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """What ``steps`` quintic Newton–Schulz steps compute, in exact arithmetic: the
    iteration maps each singular value σ of G/‖G‖_F through p(σ) = aσ + bσ³ + cσ⁵ and keeps
    the singular vectors, so NS(G) = U · p^steps(σ) · Vᵀ. Computed from an SVD in float64,
    with Keller Jordan's published coefficients written out here (not imported)."""
    a, b, c = 3.4445, -4.7750, 2.0315
    u, sv, vh = torch.linalg.svd(g.double(), full_matrices=False)
    x = sv / (sv.pow(2).sum().sqrt() + 1e-7)
    for _ in range(steps):
        x = a * x + b * x**3 + c * x**5
    return cast(torch.Tensor, u @ torch.diag(x) @ vh)
