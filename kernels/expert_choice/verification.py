"""Declared verification of Expert Choice routing: the TopK(Sᵀ, k) form against a
per-expert loop (outputs and gradients), and the claim that every expert takes exactly
k = ⌊n·c/e⌋ tokens, with k worked out here from the formula."""

from __future__ import annotations

import math

import torch

from kernels.check_inputs import routed_tokens
from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.expert_choice.batched import expert_choice, tokens_per_expert
from kernels.expert_choice.naive import naive_expert_choice
from kernels.experts import Experts
from kernels.families import BATCH_OF_ONE, IDLE_EXPERTS, UNEVEN_SIZES
from kernels.measures import Outcome, Setting, count, worst

#: tokens T, width d, experts E, capacity factor c; the skewed router sends most
#: tokens' top score to expert 0, so some tokens are chosen by several experts.
CASES = (
    case(T=45, d=16, E=5, c=1.0),
    case(T=70, d=12, E=8, c=2.0),
    case(IDLE_EXPERTS, UNEVEN_SIZES, T=37, d=8, E=6, c=1.5),
    case(BATCH_OF_ONE, T=1, d=8, E=2, c=2.0),
)


def _k(c: Case) -> int:
    """Tokens per expert from the formula k = ⌊n·c/e⌋."""
    return int(math.floor(c.T * c.c / c.E))


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    x, gate, experts = routed_tokens(s, c, gen)
    return Drawn((x, gate, *experts.tensors()), context=_k(c))


BATCHED = comparison(
    "batched-vs-loop",
    "TopK(S^T, k) routing equals the per-expert loop, outputs and gradients.",
    lambda k, x, g, *w: naive_expert_choice(x, g, Experts(*w), k),
    lambda k, x, g, *w: expert_choice(x, g, Experts(*w), k)[0],
    _draw,
    CASES,
    grads=("x", "gate", "w1", "w3", "w2"),
)


@check("k-tokens-per-expert", 0.0, measure="abs", covers=(IDLE_EXPERTS, UNEVEN_SIZES, BATCH_OF_ONE))
def every_expert_takes_k(s: Setting) -> Outcome:
    """Every expert takes exactly k = ⌊n·c/e⌋ distinct tokens, and tokens_per_expert
    gives that k."""
    results = []
    for i, c in enumerate(CASES):
        x, gate, experts = routed_tokens(s, c, s.generator(20 + i))
        k = _k(c)
        results.append(count(tokens_per_expert(c.T, c.E, c.c), k, f"tokens_per_expert({c.T}, {c.E}, {c.c})"))
        _, index = expert_choice(x, gate, experts, k)
        took = [len(set(row.tolist())) for row in index] + [0] * (c.E - index.shape[0])
        results += [count(v, k, f"{c.id}: an expert took {v} tokens, k = ⌊n·c/e⌋ = {k}") for v in took]
    return worst(results, "every expert took exactly k distinct tokens")


VERIFICATION = Verification("expert-choice", __doc__ or "", (BATCHED, every_expert_takes_k))
