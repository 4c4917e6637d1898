"""Declared verification of Expert Choice routing: the TopK(Sᵀ, k) form against a
per-expert loop (outputs and gradients), and the claim that every expert takes exactly
k = n·c/e tokens."""

from __future__ import annotations

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare_all,
    count,
    gradients,
    worst,
)
from kernels.expert_choice.batched import expert_choice, tokens_per_expert
from kernels.expert_choice.naive import naive_expert_choice
from kernels.experts import Experts, init_experts

CASES = ((75, 16, 5, 1.0), (100, 12, 8, 2.0))  # tokens n, d, experts e, capacity factor c


def _setup(s: Setting, n: int, d: int, e: int, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    return (
        s.randn(n, d, gen=gen),
        s.randn(e, d, gen=gen),
        init_experts(e, d, 2 * d, gen, s.device, s.dtype),
    )


def batched_matches_loop(s: Setting) -> Outcome:
    results = []
    for i, (n, d, e, c) in enumerate(CASES):
        x, gate, experts = _setup(s, n, d, e, i)
        k = tokens_per_expert(n, e, c)
        cot = (s.randn(n, d, gen=s.generator(10 + i)),)
        args = (x, gate, *experts.tensors())
        (o1,), g1 = gradients(
            lambda x, g, *w, k=k: naive_expert_choice(x, g, Experts(*w), k), args, cot
        )
        (o2,), g2 = gradients(
            lambda x, g, *w, k=k: expert_choice(x, g, Experts(*w), k)[0], args, cot
        )
        tag = f"n{n}-e{e}-c{c}"
        results.append(
            compare_all(
                [(f"out {tag}", o1, o2)]
                + [
                    (f"d{m} {tag}", a, b)
                    for m, a, b in zip(("x", "gate", "w1", "w3", "w2"), g1, g2, strict=True)
                ]
            )
        )
    return worst(results)


def every_expert_takes_k(s: Setting) -> Outcome:
    results = []
    for i, (n, d, e, c) in enumerate(CASES):
        x, gate, experts = _setup(s, n, d, e, 20 + i)
        k = tokens_per_expert(n, e, c)
        _, index = expert_choice(x, gate, experts, k)
        distinct = [len(set(row.tolist())) for row in index]
        results += [
            count(v, k, f"n{n}-e{e}-c{c}: expert took {v} tokens, k = n·c/e = {k}")
            for v in distinct
        ]
    return worst(results, "every expert took exactly k distinct tokens")


VERIFICATION = Verification(
    technique="expert-choice",
    compares="TopK over the transposed token-expert scores with index_add combine against a "
    "per-expert "
    "loop: outputs and gradients",
    shapes=tuple(f"n{n}-d{d}-e{e}-c{c}" for n, d, e, c in CASES),
    gradients=True,
    checks=(
        Check(
            "batched-vs-loop",
            "TopK(S^T, k) routing equals the per-expert loop, outputs and gradients.",
            batched_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "k-tokens-per-expert",
            "Every expert takes exactly k = n·c/e tokens.",
            every_expert_takes_k,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
