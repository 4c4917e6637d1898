"""The model every ZeRO stage trains: a two-layer MLP on a flat parameter vector of Ψ
elements, with data-parallel microbatches, and Adam written out elementwise.

Mixed precision as in the ZeRO paper's accounting: 2-byte (bfloat16) parameters and
gradients, and 12 bytes of fp32 optimizer state per parameter (master copy, first and
second moments): K = 12, 16Ψ bytes in all.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["ADAM", "Adam", "MLPShape", "adam_update", "local_grad", "microbatches"]


@dataclass(frozen=True)
class MLPShape:
    d: int = 12
    h: int = 20
    out: int = 4

    @property
    def numel(self) -> int:
        return self.h * self.d + self.out * self.h


@dataclass(frozen=True)
class Adam:
    lr: float = 1e-2
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8


ADAM = Adam()


def adam_update(
    master: torch.Tensor,
    m: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    step: int,
    cfg: Adam = ADAM,
) -> None:
    """In place, elementwise, so any shard of the vectors can be updated on its own."""
    m.mul_(cfg.b1).add_(g, alpha=1 - cfg.b1)
    v.mul_(cfg.b2).addcmul_(g, g, value=1 - cfg.b2)
    m_hat = m / (1 - cfg.b1**step)
    v_hat = v / (1 - cfg.b2**step)
    master.sub_(cfg.lr * m_hat / (v_hat.sqrt() + cfg.eps))


def local_grad(params16: torch.Tensor, shape: MLPShape, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """One rank's gradient (fp32) of its microbatch's MSE loss at the bf16 parameters."""
    flat = params16.float().requires_grad_()
    w1 = flat[: shape.h * shape.d].view(shape.h, shape.d)
    w2 = flat[shape.h * shape.d : shape.numel].view(shape.out, shape.h)
    loss = (torch.tanh(x @ w1.T) @ w2.T - y).pow(2).mean()
    (grad,) = torch.autograd.grad(loss, flat)
    return grad


def microbatches(
    world: int, steps: int, shape: MLPShape, gen: torch.Generator, batch: int = 7
) -> list[list[tuple[torch.Tensor, torch.Tensor]]]:
    """[step][rank] → (x, y)."""
    return [
        [
            (
                torch.randn(batch, shape.d, generator=gen),
                torch.randn(batch, shape.out, generator=gen),
            )
            for _ in range(world)
        ]
        for _ in range(steps)
    ]
