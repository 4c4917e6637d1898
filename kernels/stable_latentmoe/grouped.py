"""Stable LatentMoE with grouped experts (permute → grouped SiTU experts → unpermute),
one down-projection, one RMSNorm and one up-projection for all tokens."""

from __future__ import annotations

import torch

from kernels.experts import apply_expert, grouped_apply
from kernels.hpc_ops.fused import permute, unpermute
from kernels.stable_latentmoe.layer import StableLatentMoE, rms_norm, route, situ_act

__all__ = ["stable_latentmoe"]


def stable_latentmoe(x: torch.Tensor, layer: StableLatentMoE) -> tuple[torch.Tensor, int]:
    """Returns the output and the number of elements dispatched (T·k·ℓ)."""
    chosen, weights = route(x, layer)
    z = x @ layer.down.T
    perm = permute(chosen, layer.experts.count)
    payload = z[perm.tokens]
    routed = unpermute(
        grouped_apply(payload, perm.counts, layer.experts, situ_act), perm, weights, x.shape[0]
    )
    out = rms_norm(routed, layer.norm) @ layer.up.T
    shared = sum(apply_expert(x, layer.shared, e) for e in range(layer.shared.count))
    return out + shared, payload.numel()
