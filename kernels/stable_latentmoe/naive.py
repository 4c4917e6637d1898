"""Stable LatentMoE, the loop reference: one token at a time, experts one by one."""

from __future__ import annotations

import torch

from kernels.experts import apply_expert
from kernels.stable_latentmoe.layer import StableLatentMoE, rms_norm, route, situ_act

__all__ = ["naive_stable_latentmoe"]


def naive_stable_latentmoe(x: torch.Tensor, layer: StableLatentMoE) -> torch.Tensor:
    chosen, weights = route(x, layer)
    rows = []
    for t in range(x.shape[0]):
        z = x[t : t + 1] @ layer.down.T
        acc = torch.zeros_like(z)
        for j in range(layer.k):
            acc = acc + weights[t, j] * apply_expert(z, layer.experts, int(chosen[t, j]), situ_act)
        out = rms_norm(acc, layer.norm) @ layer.up.T
        for e in range(layer.shared.count):
            out = out + apply_expert(x[t : t + 1], layer.shared, e)
        rows.append(out[0])
    return torch.stack(rows)
