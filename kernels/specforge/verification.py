"""Declared verification of SpecForge's draft training and speculative sampling.

Compared: the batched EAGLE-3 soft cross-entropy over 7 test-time-training steps against
a position loop (loss and gradient). Properties: speculative sampling emits tokens with
exactly the target distribution: by enumeration, and by Monte Carlo (total variation
distance of 400,000 trials).
"""

from __future__ import annotations

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare,
    compare_all,
    gradients,
    within,
)
from kernels.specforge.draft import TTT_STEPS, draft_loss, speculative_sample
from kernels.specforge.naive import naive_draft_loss, output_law

B, T, V = 2, 13, 29
TRIALS = 400_000


def loss_matches_loop(s: Setting) -> Outcome:
    gen = s.generator(0)
    logits = s.randn(TTT_STEPS, B, T, V, gen=gen, scale=2.0)
    target = s.randn(TTT_STEPS, B, T, V, gen=gen, scale=2.0).softmax(-1)
    mask = s.rand(TTT_STEPS, B, T, gen=gen) > 0.25
    (l1,), (g1, _) = gradients(lambda lg, tp: naive_draft_loss(lg, tp, mask), (logits, target))
    (l2,), (g2, _) = gradients(lambda lg, tp: draft_loss(lg, tp, mask), (logits, target))
    return compare_all([("loss", l1, l2), ("d draft logits", g1, g2)])


def _pair(s: Setting, offset: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = s.generator(offset)
    p = s.randn(V, gen=gen, scale=1.5, dtype=torch.float64).softmax(-1)
    q = s.randn(V, gen=gen, scale=1.5, dtype=torch.float64).softmax(-1)
    return p, q


def law_by_enumeration(s: Setting) -> Outcome:
    p, q = _pair(s, 1)
    return compare(p, output_law(p, q), "law of the emitted token against the target p")


def law_by_monte_carlo(s: Setting) -> Outcome:
    p, q = _pair(s, 2)
    tokens = speculative_sample(p, q, TRIALS, s.generator(3))
    empirical = torch.bincount(tokens, minlength=V).double() / TRIALS
    tv = 0.5 * (empirical - p.cpu()).abs().sum().item()
    draft_tv = 0.5 * (q - p).abs().sum().item()
    accepted = torch.minimum(p, q).sum().item()
    return within(
        tv,
        0.005,
        f"total variation to p {tv:.4f} over {TRIALS} trials (the draft q alone is "
        f"{draft_tv:.3f} away; acceptance rate {accepted:.3f})",
    )


VERIFICATION = Verification(
    technique="specforge",
    compares=f"EAGLE-3 soft cross-entropy over {TTT_STEPS} test-time-training steps, batched "
    "against a "
    "position loop (loss and gradient); speculative sampling's output law against the target",
    shapes=(f"steps{TTT_STEPS}-B{B}-T{T}-V{V}", f"V{V}, {TRIALS} trials"),
    gradients=True,
    checks=(
        Check(
            "draft-loss-vs-loop",
            "The batched masked soft cross-entropy equals the position loop, with its gradient.",
            loss_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "law-enumerated",
            "Accept with min(1, p/q), else resample from max(0, p - q): the emitted "
            "token has exactly the target distribution p.",
            law_by_enumeration,
            tolerance=1e-12,
            measure="abs",
        ),
        Check(
            "law-monte-carlo",
            "Sampled speculative decoding matches p in total variation (below 0.005 with 400,000 trials).",
            law_by_monte_carlo,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
