"""Expert weights and the two ways of applying them that every MoE kernel here shares.

An expert is a gated MLP: E(x) = (act(x W₁ᵀ) ⊙ x W₃ᵀ) W₂ᵀ, with SiLU (SwiGLU) unless an
activation is given. ``apply_expert`` runs one expert; ``grouped_apply`` runs every
expert on its contiguous segment of tokens that were sorted by expert (a grouped GEMM
written as one matmul per segment).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

__all__ = ["Activation", "Experts", "apply_expert", "grouped_apply", "init_experts", "swiglu"]

Activation = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return F.silu(gate) * up


@dataclass(frozen=True)
class Experts:
    w1: torch.Tensor  # [E, F, d] gate projection
    w3: torch.Tensor  # [E, F, d] up projection
    w2: torch.Tensor  # [E, d, F] down projection

    @property
    def count(self) -> int:
        return self.w1.shape[0]

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.w1, self.w3, self.w2


def init_experts(
    count: int, d: int, hidden: int, gen: torch.Generator, device: torch.device, dtype: torch.dtype
) -> Experts:
    def r(*shape: int) -> torch.Tensor:
        x: torch.Tensor = torch.randn(*shape, generator=gen, dtype=torch.float64) * shape[-1] ** -0.5
        return x.to(device, dtype)

    return Experts(r(count, hidden, d), r(count, hidden, d), r(count, d, hidden))


def apply_expert(x: torch.Tensor, experts: Experts, e: int, act: Activation = swiglu) -> torch.Tensor:
    return act(x @ experts.w1[e].T, x @ experts.w3[e].T) @ experts.w2[e].T


def grouped_apply(
    x_sorted: torch.Tensor, counts: list[int], experts: Experts, act: Activation = swiglu
) -> torch.Tensor:
    """x_sorted: rows grouped by expert, ``counts[e]`` rows for expert e, in order."""
    outs = []
    start = 0
    for e, n in enumerate(counts):
        if n:
            outs.append(apply_expert(x_sorted[start : start + n], experts, e, act))
        start += n
    if not outs:
        return x_sorted.new_zeros(0, experts.w2.shape[1])
    return torch.cat(outs)
