"""Declared verification of expert-parallel dispatch and combine.

Compared: an MoE layer run through dispatch → experts on their ranks → combine against
the single-device token loop, outputs and gradients. Properties: with identity experts
and unweighted combine, combine∘dispatch = x · (number of target ranks); the tokens each
expert receives are exactly its routing count.
"""

from __future__ import annotations

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare_all,
    compare_forms,
    count,
)
from kernels.deepep.dispatch import combine, dispatch, expert_parallel_moe
from kernels.deepep.naive import naive_moe
from kernels.experts import Experts, init_experts

RANKS, E, K, D = 4, 8, 3, 16
TOKENS = (13, 7, 10, 5)  # per rank


def _setup(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    xs = [s.randn(n, D, gen=gen) for n in TOKENS]
    chosen, weights = [], []
    for n in TOKENS:
        top = s.randn(n, E, gen=gen).softmax(-1).topk(K, dim=-1)
        chosen.append(top.indices)
        weights.append(top.values)
    return xs, chosen, weights, init_experts(E, D, 2 * D, gen, s.device, s.dtype)


def moe_matches_loop(s: Setting) -> Outcome:
    xs, chosen, weights, experts = _setup(s, 0)
    x_all, c_all, w_all = torch.cat(xs), torch.cat(chosen), torch.cat(weights)

    def ep(x, *w):  # type: ignore[no-untyped-def]
        parts = list(x.split(list(TOKENS)))
        return torch.cat(expert_parallel_moe(parts, chosen, weights, Experts(*w))[0])

    return compare_forms(
        lambda x, *w: naive_moe(x, c_all, w_all, Experts(*w)),
        ep,
        (x_all, *experts.tensors()),
        (s.randn(x_all.shape[0], D, gen=s.generator(1)),),
        grads=("x", "w1", "w3", "w2"),
    )


def round_trip_counts_ranks(s: Setting) -> Outcome:
    xs, chosen, weights, _ = _setup(s, 2)
    inbox = dispatch(xs, chosen, weights, E)
    back = combine([list(box.x) for box in inbox], inbox, list(TOKENS), xs[0])
    per_rank = E // RANKS
    pairs = []
    for home, (x, c) in enumerate(zip(xs, chosen, strict=True)):
        targets = torch.tensor([len({e // per_rank for e in row.tolist()}) for row in c], dtype=x.dtype)
        pairs.append((f"home rank {home}", x * targets[:, None].to(x.device), back[home]))
    sent = sum(len(box.x) for box in inbox)
    out = compare_all(pairs)
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"combine(dispatch(x)) = x·#target ranks; {sent} token copies sent "
        f"instead of {sum(TOKENS) * K} (one per expert)",
    )


def receive_counts(s: Setting) -> Outcome:
    xs, chosen, weights, _ = _setup(s, 3)
    inbox = dispatch(xs, chosen, weights, E)
    received = torch.zeros(E, dtype=torch.long)
    for box in inbox:
        for local in box.experts:
            for e, _ in local:
                received[e] += 1
    expected = torch.bincount(torch.cat(chosen).flatten().cpu(), minlength=E)
    return count(
        int((received != expected).sum()),
        0,
        f"per-expert receive counts {received.tolist()} equal the routing counts",
    )


VERIFICATION = Verification(
    technique="deepep",
    compares="MoE through dispatch (one copy per target rank) -> experts on their ranks -> "
    "combine (sum at the "
    "home rank) on simulated ranks, against the single-device token loop: outputs and gradients",
    shapes=(f"{RANKS} ranks, {E} experts, top-{K}, d{D}, tokens per rank {TOKENS}",),
    gradients=True,
    checks=(
        Check(
            "ep-moe-vs-loop",
            "Dispatch/compute/combine equals the token loop, outputs and gradients.",
            moe_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "combine-dispatch",
            "With identity experts and unweighted combine, combine(dispatch(x)) = x times the number of target ranks.",
            round_trip_counts_ranks,
            tolerance=1e-6,
        ),
        Check(
            "receive-counts",
            "Each expert receives exactly as many tokens as were routed to it.",
            receive_counts,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
