"""The replicated reference: every rank holds the whole tensor, and the optimizer step
and any blockwise computation run on all of it."""

from __future__ import annotations

import torch

from kernels.formulas import adam

__all__ = ["block_absmax", "replicated_adam"]


def block_absmax(t: torch.Tensor, block: int) -> torch.Tensor:
    """The per-block scale of blockwise quantisation: max |x| over each run of ``block``
    consecutive elements, block by block."""
    flat = t.reshape(-1)
    return torch.stack([flat[i : i + block].abs().max() for i in range(0, flat.numel(), block)])


def replicated_adam(p: torch.Tensor, g: torch.Tensor, steps: int) -> torch.Tensor:
    """``steps`` steps of Adam (the pinned formula) on the whole tensor, gradient g·t at step t."""
    m, v = torch.zeros_like(p), torch.zeros_like(p)
    for step in range(1, steps + 1):
        p, m, v = adam(p, m, v, g * step, step)
    return p
