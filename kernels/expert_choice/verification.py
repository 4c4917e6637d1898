"""Declared verification of Expert Choice routing: the TopK(Sᵀ, k) form against a
per-expert loop (outputs and gradients), and the claim that every expert takes exactly
k = n·c/e tokens."""

from __future__ import annotations

from kernels.check_inputs import routed_tokens
from kernels.checks import Check, Outcome, Setting, Verification, compare_forms, count, worst
from kernels.expert_choice.batched import expert_choice, tokens_per_expert
from kernels.expert_choice.naive import naive_expert_choice
from kernels.experts import Experts

CASES = ((45, 16, 5, 1.0), (70, 12, 8, 2.0))  # tokens n, d, experts e, capacity factor c


def batched_matches_loop(s: Setting) -> Outcome:
    results = []
    for i, (n, d, e, c) in enumerate(CASES):
        x, gate, experts = routed_tokens(s, n, d, e, offset=i)
        k = tokens_per_expert(n, e, c)
        results.append(
            compare_forms(
                lambda x, g, *w, k=k: naive_expert_choice(x, g, Experts(*w), k),
                lambda x, g, *w, k=k: expert_choice(x, g, Experts(*w), k)[0],
                (x, gate, *experts.tensors()),
                (s.randn(n, d, gen=s.generator(10 + i)),),
                grads=("x", "gate", "w1", "w3", "w2"),
                tag=f"n{n}-e{e}-c{c}",
            )
        )
    return worst(results)


def every_expert_takes_k(s: Setting) -> Outcome:
    results = []
    for i, (n, d, e, c) in enumerate(CASES):
        x, gate, experts = routed_tokens(s, n, d, e, offset=20 + i)
        k = tokens_per_expert(n, e, c)
        _, index = expert_choice(x, gate, experts, k)
        distinct = [len(set(row.tolist())) for row in index]
        results += [count(v, k, f"n{n}-e{e}-c{c}: expert took {v} tokens, k = n·c/e = {k}") for v in distinct]
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
