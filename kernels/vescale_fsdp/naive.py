"""The replicated reference: every rank holds the whole tensor, and the optimizer step
and any blockwise computation run on all of it."""

from __future__ import annotations

import torch

__all__ = ["block_absmax", "replicated_adam"]


def block_absmax(t: torch.Tensor, block: int) -> torch.Tensor:
    """The per-block scale of blockwise quantisation: max |x| over each run of ``block``
    consecutive elements, block by block."""
    flat = t.reshape(-1)
    return torch.stack([flat[i : i + block].abs().max() for i in range(0, flat.numel(), block)])


def replicated_adam(p: torch.Tensor, g: torch.Tensor, steps: int) -> torch.Tensor:
    from kernels.fsdp1.model import adam_step

    p = p.clone()
    m, v = torch.zeros_like(p), torch.zeros_like(p)
    for step in range(1, steps + 1):
        adam_step(p, m, v, g * step, step)
    return p
