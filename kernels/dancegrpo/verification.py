"""Declared verification of DanceGRPO's ingredients.

Compared: the SDE step's log-probability written element by element against the
closed-form Gaussian (values and gradient with respect to the velocity); grouped
advantages against a loop. Properties: the sampled step really has the claimed law
(its standardised residual has mean 0 and variance 1); advantages stay within ±5; with a
clip range of 1e-4 the loss has no gradient once the ratio leaves [1 − 1e-4, 1 + 1e-4].
"""

from __future__ import annotations

import math

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare,
    compare_forms,
    count,
    gradients,
    within,
    worst,
)
from kernels.dancegrpo.naive import naive_advantages, naive_step_logprob
from kernels.dancegrpo.sde import advantages, clipped_loss, sde_step, step_logprob

B, C, HW = 4, 3, 5
SIGMA, SIGMA_NEXT, ETA = 0.8, 0.7, 0.7


def logprob_matches(s: Setting) -> Outcome:
    gen = s.generator(0)
    x, v = s.randn(B, C, HW, HW, gen=gen), s.randn(B, C, HW, HW, gen=gen)
    x_next = sde_step(x, v, SIGMA, SIGMA_NEXT, ETA, gen)
    return compare_forms(
        lambda v: naive_step_logprob(x_next, x, v, SIGMA, SIGMA_NEXT, ETA),
        lambda v: step_logprob(x_next, x, v, SIGMA, SIGMA_NEXT, ETA),
        (v,),
        outputs=("log-prob",),
        grads=("v",),
    )


def step_has_claimed_law(s: Setting) -> Outcome:
    gen = s.generator(1)
    x, v = s.randn(64, 4096, gen=gen), s.randn(64, 4096, gen=gen)
    x_next = sde_step(x, v, SIGMA, SIGMA_NEXT, ETA, gen)
    z = (x_next - x - (SIGMA_NEXT - SIGMA) * v) / (ETA * math.sqrt(SIGMA - SIGMA_NEXT))
    mean, var = z.mean().item(), z.var().item()
    return Outcome(
        max(abs(mean), abs(var - 1)),
        max(abs(mean), abs(var - 1)),
        f"standardised residual over {z.numel()} draws: mean {mean:.2g}, variance {var:.4f}",
    )


def advantages_match_and_are_bounded(s: Setting) -> Outcome:
    gen = s.generator(2)
    # Groups of 32: one outlier among G rewards has |A| = sqrt(G - 1) = 5.6 > 5, so the
    # clip binds (with groups of 8 it never could: sqrt(7) < 5).
    rewards = s.randn(3 * 32, gen=gen)
    rewards[3] = 1e6
    a = advantages(rewards, 32)
    loop = torch.tensor(naive_advantages(rewards.tolist(), 32), dtype=s.dtype)
    return worst([compare(loop, a, "batched vs loop"), within(a.abs().max().item(), 5.0, "max |A|")])


def clip_range_stops_gradient(s: Setting) -> Outcome:
    gen = s.generator(3)
    logp_old = s.randn(200, gen=gen)
    logp = logp_old + s.randn(200, gen=gen, scale=3e-4)
    adv = s.randn(200, gen=gen)
    _, (grad,) = gradients(lambda lp: clipped_loss(lp, logp_old, adv), (logp,))
    ratio = torch.exp(logp - logp_old)
    outside = ((adv > 0) & (ratio > 1 + 1e-4)) | ((adv < 0) & (ratio < 1 - 1e-4))
    wrong = int((grad[outside] != 0).sum()) + int((grad[~outside] == 0).sum())
    return count(
        wrong,
        0,
        f"{int(outside.sum())} of 200 samples outside the clip range, all with zero gradient",
    )


VERIFICATION = Verification(
    technique="dancegrpo",
    compares="the SDE denoising step's per-sample log-probability element by element against "
    "torch.distributions.Normal (value and gradient); grouped advantages against a loop",
    shapes=(f"B{B}-C{C}-{HW}x{HW}", "64x4096 draws for the law"),
    gradients=True,
    checks=(
        Check(
            "logprob-vs-closed-form",
            "The SDE step log-probability (mean over dimensions) equals the "
            "closed-form Gaussian log-density, with its gradient.",
            logprob_matches,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "step-law",
            "A sampled step has mean x + (σ′−σ)v and standard deviation η·sqrt(σ−σ′).",
            step_has_claimed_law,
            tolerance=0.01,
            measure="abs",
        ),
        Check(
            "advantages",
            "Group advantages (std + 1e-8) equal the loop and are clipped to ±5.",
            advantages_match_and_are_bounded,
            tolerance=1e-5,
        ),
        Check(
            "clip-range",
            "With clip range 1e-4 samples whose ratio left the range get no gradient.",
            clip_range_stops_gradient,
            tolerance=0.0,
            measure="abs",
            gradients=True,
        ),
    ),
)
