"""DeepSeek Sparse Attention, the obvious way: for each query, score every earlier key
with the lightning indexer, keep the top k, and attend over those keys only.

Indexer: I_{t,s} = Σ_j w_{t,j} · ReLU(q^I_{t,j} · k^I_s) over the indexer heads j. Ties
are broken towards the earlier key (a stable sort), in both forms.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["indexer_scores_row", "naive_dsa"]


def indexer_scores_row(qi: torch.Tensor, wi: torch.Tensor, ki: torch.Tensor) -> torch.Tensor:
    """One query's indexer scores. qi: [HI, dI], wi: [HI], ki: [S, dI] → [S]."""
    return (wi[:, None] * torch.relu(qi @ ki.T)).sum(0)


def naive_dsa(q: Tensor, k: Tensor, v: Tensor, q_idx: Tensor, w_idx: Tensor, k_idx: Tensor, topk: int) -> Tensor:
    """q, k, v: [B, T, H, D]; q_idx: [B, T, HI, dI]; w_idx: [B, T, HI]; k_idx: [B, T, dI]."""
    B, T, H, D = q.shape
    out = []
    for b in range(B):
        rows = []
        for t in range(T):
            scores = indexer_scores_row(q_idx[b, t], w_idx[b, t], k_idx[b, : t + 1])
            order = torch.sort(scores, descending=True, stable=True).indices
            keep = order[: min(topk, t + 1)]
            heads = []
            for h in range(H):
                logits = k[b, keep, h] @ q[b, t, h] * D**-0.5
                heads.append(logits.softmax(0) @ v[b, keep, h])
            rows.append(torch.stack(heads))
        out.append(torch.stack(rows))
    return torch.stack(out)
