"""Expert Choice routing, the obvious way: each expert in turn picks the k tokens it
scores highest (S = softmax(X W_g) over experts) and adds its weighted output to them.
The experts are SwiGLU feed-forwards, written with the pinned formula."""

from __future__ import annotations

import torch

from kernels.experts import Experts
from kernels.formulas import swiglu_expert

__all__ = ["naive_expert_choice"]


def naive_expert_choice(x: torch.Tensor, w_gate: torch.Tensor, experts: Experts, k: int) -> torch.Tensor:
    """x [n, d], w_gate [e, d] → [n, d]."""
    scores = (x @ w_gate.T).softmax(-1)  # [n, e]
    out = torch.zeros_like(x)
    for e in range(experts.count):
        chosen = torch.sort(scores[:, e], descending=True, stable=True).indices[:k]
        for t in chosen.tolist():
            y = swiglu_expert(x[t : t + 1], experts.w1[e], experts.w3[e], experts.w2[e])[0]
            out[t] = out[t] + scores[t, e] * y
    return out
