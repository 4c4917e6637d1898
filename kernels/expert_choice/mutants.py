"""Bugs a person makes in Expert Choice routing."""

from __future__ import annotations

from kernels.mutation import Mutant

_EC = "kernels.expert_choice.batched:expert_choice"

MUTANTS = (
    Mutant(
        "softmax-over-tokens",
        "the token-expert scores are normalised over tokens instead of over experts",
        _EC,
        "scores = (x @ w_gate.T).softmax(-1)",
        "scores = (x @ w_gate.T).softmax(0)",
        "batched-vs-loop",
    ),
    Mutant(
        "topk-off-by-one",
        "each expert keeps k - 1 tokens",
        _EC,
        ".indices[:, :k]",
        ".indices[:, : k - 1]",
        "k-tokens-per-expert",
    ),
    Mutant(
        "combine-overwrites",
        "the experts' outputs are scattered back with index_copy, so a token chosen by two "
        "experts keeps only the last one's output",
        _EC,
        "out = out.index_add(0, index[e], y)",
        "out = out.index_copy(0, index[e], y)",
        "batched-vs-loop",
    ),
    Mutant(
        "ascending-topk",
        "the scores are sorted ascending, so each expert takes its lowest-scoring tokens",
        _EC,
        "descending=True",
        "descending=False",
        "batched-vs-loop",
    ),
    Mutant(
        "capacity-factor-dropped",
        "tokens per expert is n/e, without the capacity factor c",
        "kernels.expert_choice.batched:tokens_per_expert",
        "int(n * capacity_factor / experts)",
        "int(n / experts)",
        "k-tokens-per-expert",
        kind="expected-value",
    ),
    Mutant(
        "expert-up-projection-from-gate",
        "the shared expert applies the gate projection W₁ twice, in place of the up projection W₃",
        "kernels.experts:apply_expert",
        "x @ experts.w3[e].T",
        "x @ experts.w1[e].T",
        "batched-vs-loop",
        kind="independent-reference",
    ),
)
