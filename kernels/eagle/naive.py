"""Greedy decoding the obvious way: one full target pass per new token.

EAGLE promises to emit exactly these tokens (greedy decoding is lossless), with fewer
target passes; ``speculative.eagle_decode`` is checked against this loop.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["greedy_decode"]

#: tokens [T] -> (logits [T, V], features [T, d])
Target = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def greedy_decode(target: Target, prompt: torch.Tensor, n: int) -> torch.Tensor:
    """The ``n`` tokens that greedy decoding appends to ``prompt``."""
    tokens = prompt
    for _ in range(n):
        logits, _ = target(tokens)
        tokens = torch.cat([tokens, logits[-1].argmax().view(1)])
    return tokens[prompt.shape[0] :]
