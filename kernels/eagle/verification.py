"""Declared verification of EAGLE's greedy speculative decoding.

Compared: the tokens of EAGLE decoding (draft k by feature autoregression, verify in one
target pass) against greedy decoding with the target alone, token for token, for an
untrained draft head and several k. Properties: with a draft that predicts the target's
features exactly, every drafted token is accepted and n tokens take 1 + ⌈(n − 1)/(k + 1)⌉
target passes instead of n.
"""

from __future__ import annotations

import math

import torch

from kernels.checks import Verification, check
from kernels.eagle.model import EagleHead, TinyLM
from kernels.eagle.naive import greedy_decode
from kernels.eagle.speculative import eagle_decode
from kernels.families import BATCH_OF_ONE
from kernels.measures import Outcome, Setting, count, worst

V, D, T_MAX = 37, 24, 128
#: (prompt length, tokens to decode, tokens drafted per round)
CASES = ((5, 23, 1), (5, 23, 4), (11, 41, 3), (11, 41, 6), (1, 9, 2))


def _setup(s: Setting, offset: int) -> tuple[TinyLM, EagleHead, torch.Generator]:
    gen = s.generator(offset)
    target = TinyLM.random(V, D, T_MAX, gen=gen, device=s.device)
    return target, EagleHead.random(target, gen=gen), gen


@check("lossless", 0.0, measure="abs", covers=(BATCH_OF_ONE,))
def lossless(s: Setting) -> Outcome:
    """Greedy speculative decoding emits exactly the target's greedy tokens,
    whatever the draft proposes (here an untrained EAGLE head)."""
    results = []
    for i, (P, n, k) in enumerate(CASES):
        target, draft, gen = _setup(s, i)
        prompt = s.randint(V, P, gen=gen)
        ref = greedy_decode(target, prompt, n)
        got = eagle_decode(target, draft, target.head, prompt, n, k)
        mismatches = int((ref != got.tokens).sum())
        results.append(
            count(
                mismatches,
                0,
                f"prompt {P}, n {n}, k {k}: {mismatches} tokens differ "
                f"({got.accepted}/{got.drafted} drafted kept, {got.passes} passes)",
            )
        )
    return worst(results)


@check("exact-draft-passes", 0.0, measure="abs")
def oracle_draft_accepts_all(s: Setting) -> Outcome:
    """With a draft that predicts the target's features exactly, every drafted token
    is kept: n tokens take 1 + ⌈(n − 1)/(k + 1)⌉ target passes."""
    results = []
    for i, (P, n, k) in enumerate(CASES):
        target, _, gen = _setup(s, 20 + i)
        prompt = s.randint(V, P, gen=gen)

        def oracle(tokens: torch.Tensor, features: torch.Tensor, t: TinyLM = target) -> torch.Tensor:
            return t(tokens)[1][-1]

        got = eagle_decode(target, oracle, target.head, prompt, n, k)
        expected = 1 + math.ceil((n - 1) / (k + 1))
        same = bool((got.tokens == greedy_decode(target, prompt, n)).all())
        results.append(
            count(
                got.passes + (0 if same else 10**6),
                expected,
                f"n {n}, k {k}: {got.passes} passes (greedy alone: {n}), {got.accepted}/{got.drafted} drafted kept",
            )
        )
    return worst(results)


VERIFICATION = Verification(
    "eagle",
    __doc__ or "",
    (lossless, oracle_draft_accepts_all),
    shapes=tuple(f"V{V}-d{D}-prompt{P}-n{n}-k{k}" for P, n, k in CASES),
    dtype="float64",
)
