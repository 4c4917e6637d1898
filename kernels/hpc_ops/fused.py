"""The fused-MoE pipeline of inference operator libraries, step by step in torch:

1. permute: the T·k (token, expert) pairs are sorted by expert (stably), so each
   expert's tokens sit in one contiguous segment, and the per-expert counts are taken;
2. grouped GEMM: each expert multiplies its segment (one matmul per segment);
3. unpermute: results are scaled by their routing weights and summed back into their
   tokens with one index_add.

The counts always sum to T·k.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernels.experts import Activation, Experts, grouped_apply, swiglu

__all__ = ["Permutation", "fused_moe", "permute", "unpermute"]


@dataclass(frozen=True)
class Permutation:
    order: torch.Tensor  # [T·k] positions in the flattened (token, slot) list, sorted by expert
    tokens: torch.Tensor  # [T·k] the token of each sorted row
    counts: list[int]  # rows per expert


def permute(chosen: torch.Tensor, experts: int) -> Permutation:
    flat = chosen.flatten()
    order = torch.sort(flat, stable=True).indices
    tokens = order // chosen.shape[1]
    counts = torch.bincount(flat, minlength=experts).tolist()
    return Permutation(order, tokens, counts)


def unpermute(
    y_sorted: torch.Tensor, perm: Permutation, weights: torch.Tensor, tokens: int
) -> torch.Tensor:
    w = weights.flatten()[perm.order]
    out = y_sorted.new_zeros(tokens, y_sorted.shape[1])
    return out.index_add(0, perm.tokens, y_sorted * w[:, None])


def fused_moe(
    x: torch.Tensor,
    chosen: torch.Tensor,
    weights: torch.Tensor,
    experts: Experts,
    act: Activation = swiglu,
) -> tuple[torch.Tensor, list[int]]:
    """Same contract as ``naive_moe``; also returns the per-expert counts."""
    perm = permute(chosen, experts.count)
    y = grouped_apply(x[perm.tokens], perm.counts, experts, act)
    return unpermute(y, perm, weights, x.shape[0]), perm.counts
