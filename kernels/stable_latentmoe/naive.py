"""Stable LatentMoE, the loop reference: one token at a time, experts one by one.

Routing: sigmoid scores s of the hidden state, the k best of s + bias chosen, their
unbiased scores renormalised. Routed experts are SiTU-GLU feed-forwards in the latent
space (the SiTU formula of ``kernels.situ.naive``), summed, RMSNorm-ed and projected up;
two full-width SwiGLU shared experts are added (the pinned formulas)."""

from __future__ import annotations

import torch

from kernels.formulas import rms_norm, swiglu_expert
from kernels.situ.naive import naive_situ
from kernels.stable_latentmoe.layer import StableLatentMoE

__all__ = ["naive_stable_latentmoe"]


def naive_stable_latentmoe(x: torch.Tensor, layer: StableLatentMoE) -> torch.Tensor:
    ex, sh = layer.experts, layer.shared
    rows = []
    for t in range(x.shape[0]):
        xt = x[t : t + 1]
        scores = torch.sigmoid(xt[0] @ layer.router.T)
        best = torch.sort(scores + layer.bias, descending=True, stable=True).indices[: layer.k].tolist()
        total = sum(scores[e] for e in best)
        z = xt @ layer.down.T
        acc = torch.zeros_like(z)
        for e in best:
            acc = acc + scores[e] / total * (naive_situ(z @ ex.w1[e].T, z @ ex.w3[e].T) @ ex.w2[e].T)
        out = rms_norm(acc, layer.norm) @ layer.up.T
        for e in range(sh.count):
            out = out + swiglu_expert(xt, sh.w1[e], sh.w3[e], sh.w2[e])
        rows.append(out[0])
    return torch.stack(rows)
