"""DeepEP's dispatch and combine on simulated ranks.

R ranks each hold E/R experts (expert e lives on rank e // (E/R)) and their own tokens.
Dispatch sends each token once to every rank that holds at least one of its top-k
experts, with the list of those local experts and their weights; combine sends each
rank's weighted expert outputs back to the token's home rank, which sums them. A token
is therefore sent to #target-ranks ranks (≤ k), not k times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import torch

from kernels.experts import Experts, apply_expert

__all__ = ["Received", "combine", "dispatch", "expert_parallel_moe"]


@dataclass
class Received:
    """What one rank received: rows of tokens, where they came from, which of its
    experts they chose."""

    x: list[torch.Tensor] = field(default_factory=list)
    origin: list[tuple[int, int]] = field(default_factory=list)  # (home rank, token index)
    experts: list[list[tuple[int, torch.Tensor]]] = field(default_factory=list)  # (expert, weight)


def dispatch(
    xs: list[torch.Tensor], chosen: list[torch.Tensor], weights: list[torch.Tensor], experts: int
) -> list[Received]:
    ranks = len(xs)
    per_rank = experts // ranks
    inbox = [Received() for _ in range(ranks)]
    for home, (x, c, w) in enumerate(zip(xs, chosen, weights, strict=True)):
        for t in range(x.shape[0]):
            targets: dict[int, list[tuple[int, torch.Tensor]]] = {}
            for e, wt in zip(c[t].tolist(), w[t], strict=True):
                targets.setdefault(e // per_rank, []).append((e, wt))
            for dst, local in sorted(targets.items()):
                inbox[dst].x.append(x[t])
                inbox[dst].origin.append((home, t))
                inbox[dst].experts.append(local)
    return inbox


def combine(
    outputs: list[list[torch.Tensor]], inbox: list[Received], tokens: list[int], like: torch.Tensor
) -> list[torch.Tensor]:
    """outputs[rank][i]: the rank's result for its i-th received row; summed at home.
    ``like`` gives the width, dtype and device of the results."""
    d = like.shape[-1]
    homes = [[like.new_zeros(d) for _ in range(n)] for n in tokens]
    for rank, box in enumerate(inbox):
        for (home, t), y in zip(box.origin, outputs[rank], strict=True):
            homes[home][t] = homes[home][t] + y
    return [torch.stack(rows) if rows else like.new_zeros(0, d) for rows in homes]


def expert_parallel_moe(
    xs: list[torch.Tensor],
    chosen: list[torch.Tensor],
    weights: list[torch.Tensor],
    experts: Experts,
) -> tuple[list[torch.Tensor], list[Received]]:
    inbox = dispatch(xs, chosen, weights, experts.count)
    outputs = []
    for box in inbox:
        rows = []
        for x, local in zip(box.x, box.experts, strict=True):
            row = sum(wt * apply_expert(x[None], experts, e)[0] for e, wt in local)
            rows.append(cast(torch.Tensor, row))
        outputs.append(rows)
    return combine(outputs, inbox, [x.shape[0] for x in xs], xs[0]), inbox
