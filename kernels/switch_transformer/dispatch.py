"""Switch routing with dense dispatch: a one-hot of each token's expert, a cumulative sum
down the tokens gives its slot in that expert's buffer, and slots ≥ capacity are
masked out. Every expert then runs once on its [capacity, d] buffer.

``load_balancing_loss`` is the auxiliary loss N · Σ_i f_i · P_i (f_i: share of tokens
whose top-1 is expert i; P_i: mean router probability of expert i). It is 1 when the
router is uniform and N when every token goes to one expert with certainty.
"""

from __future__ import annotations

import math

import torch

from kernels.experts import Experts, apply_expert

__all__ = ["capacity", "load_balancing_loss", "switch_dispatch"]


def capacity(tokens: int, experts: int, factor: float) -> int:
    return math.ceil(tokens / experts * factor)


def switch_dispatch(
    x: torch.Tensor, w_router: torch.Tensor, experts: Experts, cap: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as ``naive_switch``; the counts come back as a tensor [E]."""
    T, d = x.shape
    probs = (x @ w_router.T).softmax(-1)
    choice = probs.argmax(-1)
    onehot = torch.nn.functional.one_hot(choice, experts.count)  # [T, E]
    slot = (onehot.cumsum(0) - 1).gather(1, choice[:, None])[:, 0]  # position in its expert
    keep = slot < cap
    gate = probs.gather(1, choice[:, None])[:, 0] * keep
    buffer = x.new_zeros(experts.count, cap, d)
    index = choice * cap + slot.clamp(max=cap - 1)
    buffer = buffer.view(-1, d).index_put((index[keep],), x[keep]).view(experts.count, cap, d)
    outputs = torch.stack([apply_expert(buffer[e], experts, e) for e in range(experts.count)])
    out = outputs.view(-1, d)[index] * gate[:, None]
    return out, (onehot * keep[:, None]).sum(0)


def load_balancing_loss(router_probs: torch.Tensor) -> torch.Tensor:
    """router_probs [T, E] → N · Σ_i f_i P_i."""
    E = router_probs.shape[-1]
    f = torch.nn.functional.one_hot(router_probs.argmax(-1), E).float().mean(0)
    P = router_probs.float().mean(0)
    return E * (f * P).sum()
