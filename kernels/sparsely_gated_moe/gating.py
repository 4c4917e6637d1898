"""Noisy top-k gating for a whole batch, feeding the permute / grouped-GEMM / unpermute
pipeline: the gate is sparse by construction, so only the k chosen experts run per
token. With the noise weights at zero it is plain softmax-over-top-k gating."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from kernels.experts import Experts
from kernels.hpc_ops.fused import fused_moe

__all__ = ["noisy_topk_gates", "noisy_topk_moe"]


def noisy_topk_gates(x: Tensor, w_gate: Tensor, w_noise: Tensor, noise: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """(gates [T, E] with exactly k non-zero per row, chosen experts [T, k])."""
    h = x @ w_gate.T + noise * F.softplus(x @ w_noise.T)
    chosen = torch.sort(h, dim=-1, descending=True, stable=True).indices[:, :k]
    kept = torch.full_like(h, float("-inf")).scatter(1, chosen, h.gather(1, chosen))
    return kept.softmax(-1), chosen


def noisy_topk_moe(
    x: Tensor, w_gate: Tensor, w_noise: Tensor, noise: Tensor, experts: Experts, k: int,
) -> tuple[Tensor, Tensor]:
    gates, chosen = noisy_topk_gates(x, w_gate, w_noise, noise, k)
    out, _ = fused_moe(x, chosen, gates.gather(1, chosen), experts)
    return out, gates
