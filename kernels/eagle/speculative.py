"""EAGLE speculative decoding, greedy: draft k tokens by feature autoregression, verify
them with one target pass, keep the longest agreeing prefix plus the target's own next
token.

Each round: from the target's feature f at the last verified position and the token x
that the target chose next, the draft rolls features forward, f̂ ← draft(·), and reads a
token off each with the target's LM head. The target then scores the whole sequence at
once; drafted token i is kept while it equals the target's argmax at its position, and
the first disagreement is replaced by the target's choice (or, if all k agree, the
target's next token is added as a bonus). So every pass yields between 1 and k + 1
tokens, and the tokens are exactly those of greedy decoding with the target alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from kernels.eagle.naive import Target

__all__ = ["Decoded", "eagle_decode"]

#: (tokens [m], features [m-1, d]) -> the predicted feature of position m
DraftFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Decoded:
    tokens: torch.Tensor  # [n]
    #: Target forward passes, the prefill included.
    passes: int
    #: Drafted tokens the target kept, over all rounds.
    accepted: int
    drafted: int


def eagle_decode(target: Target, draft: DraftFn, head: torch.Tensor, prompt: torch.Tensor, n: int,
                 k: int) -> Decoded:
    """Greedy EAGLE decoding of ``n`` tokens after ``prompt`` with ``k`` drafted per round;
    ``head`` [d, V] is the target's LM head, shared by the draft."""
    logits, features = target(prompt)
    passes, accepted, drafted = 1, 0, 0
    tokens = prompt
    nxt = logits[-1].argmax().view(1)  # the target's choice: always right
    out = [nxt]
    while sum(t.shape[0] for t in out) < n:
        guess: list[torch.Tensor] = []
        ctx, feats = torch.cat([tokens, nxt]), features
        for _ in range(k):
            f = draft(ctx, feats)
            x = (f @ head).argmax().view(1)
            guess.append(x)
            ctx, feats = torch.cat([ctx, x]), torch.cat([feats, f.view(1, -1)])
        logits, features = target(ctx)  # one pass over tokens, nxt and the k guesses
        passes += 1
        drafted += k
        base = tokens.shape[0]  # the position of nxt
        choice = logits[base:].argmax(-1)  # the target's token after nxt and after each guess
        kept = 0
        while kept < k and bool(choice[kept] == guess[kept][0]):
            kept += 1
        accepted += kept
        tokens = torch.cat([tokens, nxt, *guess[:kept]])
        features = features[: tokens.shape[0]]
        nxt = choice[kept].view(1)
        out += [*guess[:kept], nxt]
    return Decoded(torch.cat(out)[:n], passes, accepted, drafted)
