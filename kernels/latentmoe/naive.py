"""LatentMoE, the obvious way: per token, project down, run each chosen expert in the
latent space, sum, project up, add the shared expert."""

from __future__ import annotations

import torch

from kernels.experts import apply_expert
from kernels.latentmoe.layer import LatentMoE, route

__all__ = ["naive_latentmoe"]


def naive_latentmoe(x: torch.Tensor, layer: LatentMoE) -> torch.Tensor:
    chosen, weights = route(x, layer)
    rows = []
    for t in range(x.shape[0]):
        z = x[t : t + 1] @ layer.down.T
        acc = torch.zeros_like(z)
        for j in range(layer.k):
            acc = acc + weights[t, j] * apply_expert(z, layer.experts, int(chosen[t, j]))
        rows.append((acc @ layer.up.T + apply_expert(x[t : t + 1], layer.shared, 0))[0])
    return torch.stack(rows)
