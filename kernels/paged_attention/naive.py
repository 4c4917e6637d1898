"""Decode attention over a contiguous KV cache, the obvious way: each sequence's one
new query attends, head by head, to that sequence's keys and values stored end to end."""

from __future__ import annotations

import torch

__all__ = ["contiguous_decode"]


def contiguous_decode(q: torch.Tensor, keys: list[torch.Tensor], values: list[torch.Tensor]) -> torch.Tensor:
    """q: [N, H, D], one query per sequence; keys[i], values[i]: [L_i, H, D] → [N, H, D]."""
    N, H, D = q.shape
    out = []
    for i in range(N):
        heads = []
        for h in range(H):
            scores = keys[i][:, h].float() @ q[i, h].float() * D**-0.5
            heads.append(scores.softmax(0) @ values[i][:, h].float())
        out.append(torch.stack(heads))
    return torch.stack(out)
