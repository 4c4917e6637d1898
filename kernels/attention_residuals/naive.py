"""Attention Residuals, the obvious way: a layer's input is a softmax-weighted mix of
the earlier representations ("sources"), taken over depth, one source at a time.

For a layer with pseudo-query w (a learned vector) and sources v_0 … v_{n−1}:
    logit_i = w · RMSNorm(v_i),   α = softmax_i(logit),   input = Σ_i α_i v_i
computed independently for every token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

__all__ = ["naive_attnres", "naive_network"]


def naive_attnres(
    sources: list[torch.Tensor], query: torch.Tensor, norm: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    """sources: n tensors [B, T, d]; query, norm: [d] → [B, T, d]."""
    logits = []
    for v in sources:
        key = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps) * norm
        logits.append((key * query).sum(-1))
    top = torch.stack(logits).max(0).values
    weights = [(logit - top).exp() for logit in logits]
    total = sum(weights)
    out = torch.zeros_like(sources[0])
    for w, v in zip(weights, sources, strict=True):
        out = out + (w / total)[..., None] * v
    return out


def naive_network(
    x: torch.Tensor,
    layers: Sequence[Callable[[torch.Tensor], torch.Tensor]],
    queries: torch.Tensor,
    norm: torch.Tensor,
    block: int | None = None,
) -> torch.Tensor:
    """A network wired with Attention Residuals, each layer's sources spelled out.

    Full (``block`` None): layer l mixes the embedding and every earlier layer's output.
    Block: the embedding, the sum of each finished block's outputs, and the sum of the
    current block's outputs so far (when there are any). The output mixes the sources a
    layer after the last would see; ``queries`` has one row per layer and one for it."""
    outputs: list[torch.Tensor] = []

    def sources(layer: int) -> list[torch.Tensor]:
        if block is None:
            return [x, *outputs[:layer]]
        done = layer // block
        found = [x] + [_total(outputs[b * block : (b + 1) * block]) for b in range(done)]
        if layer % block:
            found.append(_total(outputs[done * block : layer]))
        return found

    for i, layer in enumerate(layers):
        outputs.append(layer(naive_attnres(sources(i), queries[i], norm)))
    return naive_attnres(sources(len(layers)), queries[len(layers)], norm)


def _total(items: list[torch.Tensor]) -> torch.Tensor:
    total = items[0]
    for t in items[1:]:
        total = total + t
    return total
