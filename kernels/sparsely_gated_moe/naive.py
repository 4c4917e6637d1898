"""Noisy top-k gating, the obvious way: per token, add the noise, keep the k largest
gate logits, softmax over those, and run the chosen experts.

    H(x)_i = (x W_g)_i + ε_i · softplus((x W_noise)_i),   ε ~ N(0, 1)
    G(x) = softmax(KeepTopK(H(x), k))   (the others set to −∞, so their gate is 0)

The experts are SwiGLU feed-forwards written with the pinned formula.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from kernels.experts import Experts
from kernels.formulas import swiglu_expert

__all__ = ["naive_noisy_topk_moe"]


def naive_noisy_topk_moe(
    x: Tensor, w_gate: Tensor, w_noise: Tensor, noise: Tensor, experts: Experts, k: int,
) -> tuple[Tensor, Tensor]:
    """x [T, d]; w_gate, w_noise [E, d]; noise [T, E] (the ε draws). Returns (out, gates [T, E])."""
    rows, gates = [], []
    for t in range(x.shape[0]):
        h = x[t] @ w_gate.T + noise[t] * F.softplus(x[t] @ w_noise.T)
        keep = torch.sort(h, descending=True, stable=True).indices[:k]
        masked = torch.full_like(h, float("-inf"))
        masked[keep] = h[keep]
        g = masked.softmax(-1)
        gates.append(g)
        acc = torch.zeros_like(x[t])
        for e in keep.tolist():
            acc = acc + g[e] * swiglu_expert(x[t : t + 1], experts.w1[e], experts.w3[e], experts.w2[e])[0]
        rows.append(acc)
    return torch.stack(rows), torch.stack(gates)
