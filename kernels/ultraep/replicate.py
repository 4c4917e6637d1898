"""UltraEP-style hot-expert replication and rerouting.

``replicate`` hands out spare replica slots greedily, each to the expert whose current
per-replica load is highest (the EPLB rule); for the largest per-replica load this is
optimal. ``reroute`` maps logical experts to physical replicas: each expert's tokens
are split across its replicas as evenly as possible. Replicas hold copies of the same
weights, so every token is still processed exactly once by the same function; the
replicas' weight gradients are partial sums that add up to the unreplicated gradient
(the ``grad_reduce`` step before the weights are synchronised again).
"""

from __future__ import annotations

import torch

from kernels.experts import Experts, apply_expert

__all__ = ["max_load", "replicate", "replicated_forward", "reroute"]


def replicate(loads: list[float], spare: int) -> list[int]:
    """Replicas per expert (≥ 1), with ``spare`` extra ones given greedily."""
    counts = [1] * len(loads)
    for _ in range(spare):
        hot = max(range(len(loads)), key=lambda e: (loads[e] / counts[e], -e))
        counts[hot] += 1
    return counts


def max_load(loads: list[float], counts: list[int]) -> float:
    return max(load / c for load, c in zip(loads, counts, strict=True))


def reroute(tokens_per_expert: list[list[int]], counts: list[int]) -> list[tuple[int, list[int]]]:
    """Physical replicas as (logical expert, token indices), tokens split round-robin."""
    replicas = []
    for e, (tokens, n) in enumerate(zip(tokens_per_expert, counts, strict=True)):
        for r in range(n):
            replicas.append((e, tokens[r::n]))
    return replicas


def replicated_forward(
    x: torch.Tensor, experts: Experts, replicas: list[tuple[int, list[int]]]
) -> tuple[torch.Tensor, list[Experts]]:
    """Run each physical replica on its tokens with its own copy of the weights. Returns
    the output rows (in token order, each token once) and the replica weight copies, so
    that their gradients can be inspected."""
    out = torch.zeros_like(x)
    copies = []
    for e, tokens in replicas:
        w = Experts(*(t[e : e + 1].detach().clone().requires_grad_() for t in experts.tensors()))
        copies.append(w)
        if tokens:
            idx = torch.tensor(tokens, device=x.device)
            out = out.index_add(0, idx, apply_expert(x[idx], w, 0))
    return out, copies
