"""Declared verification of auxiliary-loss-free load balancing.

Compared: batched biased top-k routing against a per-token loop (choices and weights).
Properties: the weights come from the unbiased scores; with a zero bias it is plain
top-k; repeated bias updates drive max/mean expert load towards 1 on a skewed router.
"""

from __future__ import annotations

import torch

from kernels.aux_loss_free.balance import bias_update, load_imbalance, route
from kernels.aux_loss_free.naive import naive_route
from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare,
    compare_all,
    count,
    within,
    worst,
)

T, E, K = 75, 8, 2


def _skewed_logits(s: Setting, tokens: int, offset: int) -> torch.Tensor:
    gen = s.generator(offset)
    skew = torch.linspace(2.0, -2.0, E, dtype=torch.float64).to(s.device, s.dtype)  # expert 0 is popular
    return s.randn(tokens, E, gen=gen) + skew


def batched_matches_loop(s: Setting) -> Outcome:
    logits = _skewed_logits(s, T, 0)
    bias = s.randn(E, gen=s.generator(1), scale=0.3)
    c1, w1 = naive_route(logits, bias, K, route_scale=2.5)
    c2, w2 = route(logits, bias, K, route_scale=2.5)
    return compare_all([("chosen experts", c1.float(), c2.float()), ("weights", w1, w2)])


def weights_ignore_bias(s: Setting) -> Outcome:
    logits = _skewed_logits(s, T, 2)
    bias = s.randn(E, gen=s.generator(3), scale=0.5)
    chosen, weights = route(logits, bias, K)
    sig = torch.sigmoid(logits).gather(1, chosen)
    plain_chosen, _ = route(logits, torch.zeros_like(bias), K)
    topk = torch.sigmoid(logits).topk(K, dim=-1).indices.sort(-1).values
    return worst(
        [
            compare(sig / sig.sum(-1, keepdim=True), weights, "weights vs renormalised unbiased scores"),
            compare(topk.float(), plain_chosen.sort(-1).values.float(), "zero bias vs plain top-k"),
        ]
    )


def balance_improves(s: Setting) -> Outcome:
    logits = _skewed_logits(s, 2048, 4)
    bias = torch.zeros(E, device=s.device, dtype=s.dtype)
    history = []
    for _ in range(150):
        chosen, _ = route(logits, bias, K)
        counts = torch.bincount(chosen.flatten(), minlength=E)
        history.append(load_imbalance(counts))
        bias = bias_update(bias, counts, step=0.01)
    start, end = history[0], history[-1]
    checks = [
        within(end, 1.15, f"max/mean load {start:.3f} at step 0, {end:.3f} after 150 updates"),
        count(int(end >= start), 0, "the imbalance fell"),
    ]
    return worst(checks, f"max/mean load {start:.3f} → {min(history):.3f} (best) → {end:.3f} over 150 steps")


VERIFICATION = Verification(
    technique="aux-loss-free-balancing",
    compares="batched biased top-k routing with renormalised unbiased weights against a per-token loop",
    shapes=(f"T{T}-E{E}-k{K}", f"T2048-E{E}-k{K} for the balancing run"),
    checks=(
        Check(
            "batched-vs-loop",
            "Batched biased routing chooses the same experts with the same weights as the token loop.",
            batched_matches_loop,
            tolerance=1e-6,
        ),
        Check(
            "unbiased-weights",
            "The bias changes only the choice: weights are the renormalised "
            "unbiased scores, and a zero bias is plain top-k.",
            weights_ignore_bias,
            tolerance=1e-6,
        ),
        Check(
            "balance",
            "Bias updates drive the max/mean expert load towards 1 (below 1.15 within 150 steps from a skewed router).",
            balance_improves,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
