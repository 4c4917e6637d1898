"""Hot-expert replication, the obvious way: try every way of handing out the spare
replica slots and keep one that minimises the largest per-replica load; and the expert
run once on all of its tokens, unreplicated (a SwiGLU feed-forward, the pinned formula)."""

from __future__ import annotations

import itertools

import torch

from kernels.experts import Experts
from kernels.formulas import swiglu_expert

__all__ = ["brute_force_replicas", "unreplicated_expert"]


def brute_force_replicas(loads: list[float], spare: int) -> float:
    """The smallest achievable max(load_e / replicas_e) with ``spare`` extra replicas."""
    best = float("inf")
    for extra in itertools.product(range(spare + 1), repeat=len(loads)):
        if sum(extra) != spare:
            continue
        best = min(best, max(load / (1 + x) for load, x in zip(loads, extra, strict=True)))
    return best


def unreplicated_expert(x: torch.Tensor, experts: Experts, e: int) -> torch.Tensor:
    return swiglu_expert(x, experts.w1[e], experts.w3[e], experts.w2[e])
