"""Switch routing, the obvious way: tokens in arrival order, each to its top-1 expert
while that expert has room; a token that finds its expert full is dropped (the layer
adds nothing for it and the residual carries it). The experts are SwiGLU feed-forwards,
written with the pinned formula of :mod:`kernels.formulas`."""

from __future__ import annotations

import torch

from kernels.experts import Experts
from kernels.formulas import swiglu_expert

__all__ = ["naive_switch"]


def naive_switch(
    x: torch.Tensor, w_router: torch.Tensor, experts: Experts, capacity: int
) -> tuple[torch.Tensor, list[int]]:
    """x [T, d], w_router [E, d] → (output [T, d], tokens processed per expert)."""
    probs = (x @ w_router.T).softmax(-1)
    used = [0] * experts.count
    rows = []
    for t in range(x.shape[0]):
        e = int(probs[t].argmax())
        if used[e] < capacity:
            used[e] += 1
            y = swiglu_expert(x[t : t + 1], experts.w1[e], experts.w3[e], experts.w2[e])[0]
            rows.append(probs[t, e] * y)
        else:
            rows.append(torch.zeros_like(x[t]))
    return torch.stack(rows), used
