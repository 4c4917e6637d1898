"""LatentMoE with grouped experts: project all tokens down once, dispatch the ℓ-wide
latents sorted by expert, run each expert on its segment, combine, project up once.

``latent_moe`` also reports how many elements were dispatched: T·k·ℓ (a full-width MoE
would move T·k·d)."""

from __future__ import annotations

import torch

from kernels.experts import apply_expert, grouped_apply
from kernels.hpc_ops.fused import permute, unpermute
from kernels.latentmoe.layer import LatentMoE, route

__all__ = ["latent_moe"]


def latent_moe(x: torch.Tensor, layer: LatentMoE) -> tuple[torch.Tensor, int]:
    chosen, weights = route(x, layer)
    z = x @ layer.down.T  # [T, ℓ]
    perm = permute(chosen, layer.experts.count)
    payload = z[perm.tokens]  # what crosses the expert-parallel fabric
    y = grouped_apply(payload, perm.counts, layer.experts)
    routed = unpermute(y, perm, weights, x.shape[0]) @ layer.up.T
    return routed + apply_expert(x, layer.shared, 0), payload.numel()
