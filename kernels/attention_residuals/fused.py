"""Attention Residuals as one stacked operation, and the two ways a network wires them.

``attnres`` normalises all sources at once and takes one softmax over the depth axis.
``full_forward`` gives layer l every earlier output (the embedding included) as
sources. ``block_forward`` groups layers into blocks: the sources are the sums of the
finished blocks plus the current block's partial sum (when it is not empty), so the
number of sources grows with blocks, not layers. With blocks of one layer the two
wirings coincide.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

__all__ = ["attnres", "block_forward", "full_forward"]

Layer = Callable[[torch.Tensor], torch.Tensor]


def attnres(sources: torch.Tensor, query: torch.Tensor, norm: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """sources [n, B, T, d] → [B, T, d]."""
    keys = sources * torch.rsqrt(sources.pow(2).mean(-1, keepdim=True) + eps) * norm
    alpha = torch.einsum("nbtd,d->nbt", keys, query).softmax(dim=0)
    return torch.einsum("nbt,nbtd->btd", alpha, sources)


def full_forward(
    x: torch.Tensor,
    layers: Sequence[Layer],
    queries: torch.Tensor,
    norm: torch.Tensor,
    mix: Callable[..., torch.Tensor] = attnres,
) -> torch.Tensor:
    """queries: [L + 1, d] (one per layer and one for the output)."""
    outputs = [x]
    for i, layer in enumerate(layers):
        outputs.append(layer(_mix(mix, outputs, queries[i], norm)))
    return _mix(mix, outputs, queries[len(layers)], norm)


def block_forward(
    x: torch.Tensor,
    layers: Sequence[Layer],
    queries: torch.Tensor,
    norm: torch.Tensor,
    block: int,
    mix: Callable[..., torch.Tensor] = attnres,
) -> torch.Tensor:
    finished = [x]
    partial: torch.Tensor | None = None
    for i, layer in enumerate(layers):
        sources = finished + ([partial] if partial is not None else [])
        out = layer(_mix(mix, sources, queries[i], norm))
        partial = out if partial is None else partial + out
        if (i + 1) % block == 0:
            finished.append(partial)
            partial = None
    sources = finished + ([partial] if partial is not None else [])
    return _mix(mix, sources, queries[len(layers)], norm)


def _mix(
    mix: Callable[..., torch.Tensor],
    sources: list[torch.Tensor],
    query: torch.Tensor,
    norm: torch.Tensor,
) -> torch.Tensor:
    if mix is attnres:
        return attnres(torch.stack(sources), query, norm)
    return mix(sources, query, norm)
