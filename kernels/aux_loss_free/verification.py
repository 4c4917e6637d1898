"""Declared verification of auxiliary-loss-free load balancing.

Compared: batched biased top-k routing against a per-token loop (choices and weights).
Properties: the weights come from the unbiased scores; with a zero bias it is plain
top-k; the bias update and the imbalance measure follow their formulas on counts with
idle experts (worked out here); repeated bias updates drive max/mean expert load towards
1 on a skewed router.
"""

from __future__ import annotations

import torch

from kernels.aux_loss_free.balance import bias_update, load_imbalance, route
from kernels.aux_loss_free.naive import naive_route
from kernels.checks import Verification, check
from kernels.families import BATCH_OF_ONE, EXTREME_LOGITS, IDLE_EXPERTS
from kernels.measures import Outcome, Setting, against, compare, count, within, worst

T, E, K = 75, 8, 2


def _skewed_logits(s: Setting, tokens: int, offset: int, spread: float = 2.0) -> torch.Tensor:
    gen = s.generator(offset)
    skew = torch.linspace(spread, -spread, E, dtype=torch.float64).to(s.device, s.dtype)  # expert 0 is popular
    return s.randn(tokens, E, gen=gen) + skew


@check("batched-vs-loop", 1e-6, covers=(EXTREME_LOGITS, BATCH_OF_ONE))
def batched_matches_loop(s: Setting) -> Outcome:
    """Batched biased routing chooses the same experts with the same weights as the
    token loop, also for one token and for logits of order 1e2."""
    results = []
    for i, (tokens, spread) in enumerate(((T, 2.0), (1, 2.0), (T, 100.0))):
        logits = _skewed_logits(s, tokens, i, spread)
        bias = s.randn(E, gen=s.generator(10 + i), scale=0.3)
        c1, w1 = naive_route(logits, bias, K, route_scale=2.5)
        c2, w2 = route(logits, bias, K, route_scale=2.5)
        results += [compare(c1.float(), c2.float(), f"chosen, {tokens} tokens"), compare(w1, w2, f"weights {spread}")]
    return worst(results)


@check("unbiased-weights", 1e-6)
def weights_ignore_bias(s: Setting) -> Outcome:
    """The bias changes only the choice: weights are the renormalised unbiased scores,
    and a zero bias is plain top-k."""
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


@check("update-and-imbalance", 1e-8, measure="abs", covers=(IDLE_EXPERTS,))
def update_formula(s: Setting) -> Outcome:
    """On counts with idle experts, the bias moves by u·sign(mean(c) − c) centred to mean
    0, and the imbalance is max(c)/mean(c) over every expert, idle ones included."""
    results = []
    for counts in ([3, 1, 0, 0], [12, 0, 5, 7, 0, 0, 0, 0], [2, 2, 2, 2]):
        c = torch.tensor(counts, device=s.device)
        mean = sum(counts) / len(counts)
        step = [0.01 * ((mean > n) - (mean < n)) for n in counts]
        expected = [d - sum(step) / len(step) for d in step]
        moved = bias_update(torch.zeros(len(counts), device=s.device, dtype=s.dtype), c, 0.01)
        results.append(compare(torch.tensor(expected), moved.double().cpu(), f"update for counts {counts}"))
        results.append(against(load_imbalance(c), max(counts) / mean, f"imbalance of {counts}"))
    return worst(results, "the centred sign update and max/mean imbalance on counts with idle experts")


@check("balance", 0.0, measure="abs", covers=(IDLE_EXPERTS,))
def balance_improves(s: Setting) -> Outcome:
    """Bias updates drive the max/mean expert load towards 1 (below 1.15 within 150
    steps from a router so skewed that the last experts start idle)."""
    logits = _skewed_logits(s, 2048, 4, spread=3.0)
    bias = torch.zeros(E, device=s.device, dtype=s.dtype)
    history, idle = [], []
    for _ in range(150):
        chosen, _ = route(logits, bias, K)
        counts = torch.bincount(chosen.flatten().cpu(), minlength=E)
        idle.append(int((counts == 0).sum()))
        history.append(counts.max().item() / counts.double().mean().item())
        bias = bias_update(bias, counts.to(s.device), step=0.01)
    start, end = history[0], history[-1]
    checks = [
        within(end, 1.15, f"max/mean load {start:.3f} at step 0, {end:.3f} after 150 updates"),
        count(int(end >= start), 0, "the imbalance fell"),
    ]
    return worst(
        checks,
        f"max/mean load {start:.3f} ({idle[0]} idle experts) → {min(history):.3f} (best) → {end:.3f} "
        f"({idle[-1]} idle) over 150 steps",
    )


VERIFICATION = Verification(
    "aux-loss-free-balancing",
    __doc__ or "",
    (batched_matches_loop, weights_ignore_bias, update_formula, balance_improves),
    shapes=(f"T{T}-E{E}-k{K}", "T1", f"T2048-E{E}-k{K} for the balancing run"),
)
