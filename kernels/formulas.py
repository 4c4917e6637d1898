"""The published formulas the naive forms are written with, pinned to literal values.

A naive form must not share code with the structured form it checks: a bug in a shared
helper changes both sides and every comparison still agrees. So the naive forms build
on this module alone (and on each other), and no structured form imports it
(``tests/kernels/test_independence.py`` holds both rules). Each formula here is pinned by
:data:`PINS`: inputs small enough to work by hand and the values the published formula
gives, written out as literals. Every verification whose naive form uses a formula runs
its pins as the check ``reference-formulas`` (see :func:`kernels.verify.declared_checks`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["PINS", "Pin", "adam", "rms_norm", "rope_frequencies", "rotate_pairs", "silu", "swiglu_expert"]


def silu(z: torch.Tensor) -> torch.Tensor:
    """SiLU(z) = z · σ(z) = z / (1 + e^{−z})."""
    return z / (1 + torch.exp(-z))


def swiglu_expert(x: torch.Tensor, w1: torch.Tensor, w3: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """A SwiGLU feed-forward expert (Shazeer, 2020): (SiLU(x W₁ᵀ) ⊙ x W₃ᵀ) W₂ᵀ, with
    w1, w3 [F, d] and w2 [d, F]."""
    return (silu(x @ w1.T) * (x @ w3.T)) @ w2.T


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm (Zhang & Sennrich, 2019): x / √(mean(x²) + ε) · w, ε inside the root."""
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rope_frequencies(dim: int, base: float = 10000.0) -> torch.Tensor:
    """RoPE's rotation frequencies θ_i = base^(−2i/d), i = 0 … d/2 − 1, in float64."""
    return torch.tensor([base ** (-2 * i / dim) for i in range(dim // 2)], dtype=torch.float64)


def rotate_pairs(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoPE on the last dimension, pairs (x_i, x_{i+d/2}) taken as the complex number
    x_i + i·x_{i+d/2} and multiplied by e^{i·pos·θ_i}; ``positions`` broadcasts against
    x without its last dimension."""
    d = x.shape[-1]
    angle = positions.double().cpu()[..., None] * rope_frequencies(d, base)
    turn = torch.polar(torch.ones_like(angle), angle).to(x.device)
    z = torch.complex(x[..., : d // 2].double(), x[..., d // 2 :].double()) * turn
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)


def adam(
    p: Tensor, m: Tensor, v: Tensor, g: Tensor, t: int, lr: float = 1e-2, b1: float = 0.9, b2: float = 0.999,
    eps: float = 1e-8,
) -> tuple[Tensor, Tensor, Tensor]:
    """Step t ≥ 1 of Adam, Kingma & Ba's Algorithm 1, returning new (p, m, v):
    m ← β₁m + (1 − β₁)g;  v ← β₂v + (1 − β₂)g²;  m̂ = m/(1 − β₁ᵗ);  v̂ = v/(1 − β₂ᵗ);
    p ← p − α·m̂/(√v̂ + ε)."""
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat = m / (1 - b1**t)
    v_hat = v / (1 - b2**t)
    return p - lr * m_hat / (torch.sqrt(v_hat) + eps), m, v


@dataclass(frozen=True)
class Pin:
    """One formula at literal inputs, against the values worked out by hand."""

    formula: Callable[..., object]
    statement: str
    compute: Callable[[], torch.Tensor]
    expected: tuple[float, ...]


def _t(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _adam_two_steps() -> torch.Tensor:
    p, m, v = _t(1.0, -2.0), _t(0.0, 0.0), _t(0.0, 0.0)
    for t, g in enumerate((_t(0.5, -3.0), _t(-0.25, 4.0)), start=1):
        p, m, v = adam(p, m, v, g, t, lr=0.1)
    return torch.cat([p, m, v])


#: The literal values: worked by hand from the formula in ``statement`` (SiLU(−2) =
#: −2σ(−2) = −0.238405844…; RoPE at position 2 turns pair 0 by 2 rad and pair 1 by 0.2 rad).
PINS: tuple[Pin, ...] = (
    Pin(
        silu,
        "SiLU(z) = z·σ(z)",
        lambda: silu(_t(0.0, -2.0, 1.0)),
        (0.0, -0.2384058440442351, 0.7310585786300049),
    ),
    Pin(
        swiglu_expert,
        "SwiGLU(x) = (silu(x W1) ⊙ x W3) W2",
        lambda: swiglu_expert(
            _t(1.0, -2.0)[None],
            _t(0.5, 0.25, -1.0, 0.5).view(2, 2),
            _t(1.0, 0.0, 0.5, 0.5).view(2, 2),
            _t(1.0, -1.0, 0.5, 2.0).view(2, 2),
        )[0],
        (-0.11920292202211755, 0.2384058440442351),
    ),
    Pin(
        rms_norm,
        "RMSNorm(x) = x / sqrt(mean(x^2) + eps) · w, eps = 1e-6 inside the root",
        lambda: torch.cat([rms_norm(_t(3e-4, 4e-4), _t(1.0, 2.0)), rms_norm(_t(3.0, 4.0), _t(1.0, 2.0))]),
        (0.282842712474619, 0.7542472332656508, 0.8485281034827336, 2.2627416092872896),
    ),
    Pin(
        rope_frequencies,
        "RoPE frequencies theta_i = base^(-2i/d), d = 8, base = 10000",
        lambda: rope_frequencies(8),
        (1.0, 0.1, 0.01, 0.001),
    ),
    Pin(
        rotate_pairs,
        "RoPE turns pair (x_i, x_{i+d/2}) by pos·theta_i; d = 8, position 2",
        lambda: rotate_pairs(_t(1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0), torch.tensor(2)),
        (-0.4161468365471424, -0.19866933079506122, 0.0, 0.0, 0.9092974268256817, 0.9800665778412416, 0.0, 0.0),
    ),
    Pin(
        adam,
        "Adam with both bias corrections (Kingma & Ba, Algorithm 1), lr 0.1, two steps",
        _adam_two_steps,
        (
            0.8733662987078463,
            -1.9193510411922534,
            0.019999999999999997,
            0.12999999999999995,
            0.0003122500000000003,
            0.02499100000000002,
        ),
    ),
)
