"""LatentMoE, the obvious way: per token, score every expert on the full hidden state
(sigmoid), keep the k best and renormalise their scores, project down, run each chosen
expert in the latent space, sum, project up, add the shared expert. Experts are SwiGLU
feed-forwards written with the pinned formula."""

from __future__ import annotations

import torch

from kernels.formulas import swiglu_expert
from kernels.latentmoe.layer import LatentMoE

__all__ = ["naive_latentmoe"]


def naive_latentmoe(x: torch.Tensor, layer: LatentMoE) -> torch.Tensor:
    ex, sh = layer.experts, layer.shared
    rows = []
    for t in range(x.shape[0]):
        xt = x[t : t + 1]
        scores = torch.sigmoid(xt[0] @ layer.router.T)
        best = torch.sort(scores, descending=True, stable=True).indices[: layer.k].tolist()
        total = sum(scores[e] for e in best)
        z = xt @ layer.down.T
        acc = torch.zeros_like(z)
        for e in best:
            acc = acc + scores[e] / total * swiglu_expert(z, ex.w1[e], ex.w3[e], ex.w2[e])
        rows.append((acc @ layer.up.T + swiglu_expert(xt, sh.w1[0], sh.w3[0], sh.w2[0]))[0])
    return torch.stack(rows)
