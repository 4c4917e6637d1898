"""The model the FSDP references train: a few parameters of awkward shapes, a loss over
a microbatch, and an elementwise optimizer step (Adam), shared by FSDP1, FSDP2 and
veScale-FSDP."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["SHAPES", "adam_step", "init_params", "loss", "microbatches"]

#: Rows that do not divide evenly over 2 or 4 ranks, and a bias vector.
SHAPES = ((7, 5), (5,), (3, 5), (6, 3))


def init_params(gen: torch.Generator) -> list[torch.Tensor]:
    return [torch.randn(*shape, generator=gen) * 0.5 for shape in SHAPES]


def loss(params: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    w1, b1, w2, w3 = params
    h = torch.tanh(x @ w1 + b1)  # [B, 5]
    out = torch.tanh(h @ w2.T) @ w3.T  # [B, 6]
    return out.pow(2).mean() + 1e-3 * w2.pow(2).sum()


def microbatches(
    world: int, steps: int, gen: torch.Generator, batch: int = 5
) -> list[list[torch.Tensor]]:
    return [[torch.randn(batch, 7, generator=gen) for _ in range(world)] for _ in range(steps)]


def adam_step(
    p: Tensor, m: Tensor, v: Tensor, g: Tensor, step: int, lr: float = 1e-2, b1: float = 0.9, b2: float = 0.999,
    eps: float = 1e-8,
) -> None:
    m.mul_(b1).add_(g, alpha=1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    p.sub_(lr * (m / (1 - b1**step)) / ((v / (1 - b2**step)).sqrt() + eps))
