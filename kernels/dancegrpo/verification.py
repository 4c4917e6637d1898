"""Declared verification of DanceGRPO's ingredients.

Compared: the SDE step's log-probability written element by element against the
closed-form Gaussian (values and gradient with respect to the velocity); grouped
advantages against a loop. Properties: the sampled step really has the claimed law
(its standardised residual's mean and variance within exact bounds that fail a correct
step with probability below 1e-6) and draws from the caller's generator; advantages stay within ±5; with a
clip range of 1e-4 the loss has no gradient once the ratio leaves [1 − 1e-4, 1 + 1e-4].
"""

from __future__ import annotations

import math

import torch

from kernels.checks import Verification, check
from kernels.dancegrpo.naive import naive_advantages, naive_step_logprob
from kernels.dancegrpo.sde import advantages, clipped_loss, sde_step, step_logprob
from kernels.families import BATCH_OF_ONE
from kernels.measures import Outcome, Setting, compare, compare_forms, count, gradients, within, worst
from kernels.stats import FALSE_FAILURE, chi2_variance_interval, gaussian_mean_halfwidth, outside, threads_generator

B, C, HW = 4, 3, 5
SIGMA, SIGMA_NEXT, ETA = 0.8, 0.7, 0.7


@check("logprob-vs-closed-form", 1e-5, gradients=True, covers=(BATCH_OF_ONE,))
def logprob_matches(s: Setting) -> Outcome:
    """The SDE step log-probability (mean over dimensions) equals the closed-form Gaussian
    log-density, with its gradient, also for a batch of one."""
    results = []
    for i, batch in enumerate((B, 1)):
        gen = s.generator(i)
        x, v = s.randn(batch, C, HW, HW, gen=gen), s.randn(batch, C, HW, HW, gen=gen)
        x_next = sde_step(x, v, SIGMA, SIGMA_NEXT, ETA, gen)
        results.append(
            compare_forms(
                lambda v, x=x, x_next=x_next: naive_step_logprob(x_next, x, v, SIGMA, SIGMA_NEXT, ETA),
                lambda v, x=x, x_next=x_next: step_logprob(x_next, x, v, SIGMA, SIGMA_NEXT, ETA),
                (v,),
                outputs=("log-prob",),
                grads=("v",),
                tag=f"B{batch}",
            )
        )
    return worst(results)


@check("step-law", 0.0, measure="abs", false_failure=FALSE_FAILURE)
def step_has_claimed_law(s: Setting) -> Outcome:
    """A sampled step has mean x + (σ′−σ)v and standard deviation η·sqrt(σ−σ′): over
    262,144 draws the standardised residual's mean and variance lie within the exact
    normal and chi-square (Laurent–Massart) bounds, which fail a correct step with
    probability below 1e-6."""
    gen = s.generator(1)
    x, v = s.randn(64, 4096, gen=gen), s.randn(64, 4096, gen=gen)
    x_next = sde_step(x, v, SIGMA, SIGMA_NEXT, ETA, gen)
    z = ((x_next - x - (SIGMA_NEXT - SIGMA) * v) / (ETA * math.sqrt(SIGMA - SIGMA_NEXT))).double()
    n = z.numel()
    mean, var = z.mean().item(), z.var().item()
    low, high = chi2_variance_interval(n, tests=2)
    half = gaussian_mean_halfwidth(n, tests=2)
    excess = max(outside(mean, half), low - var, var - high, 0.0)
    return Outcome(
        excess,
        excess,
        f"standardised residual over {n} draws: mean {mean:.2g} (bound ±{half:.2g}), variance {var:.4f} "
        f"(bounds {low:.4f}..{high:.4f})",
    )


@check("step-threads-generator", 0.0, measure="abs")
def step_threads_generator(s: Setting) -> Outcome:
    """The step's noise comes from the generator it is given: the same seed gives the same
    step, another seed another, and torch's global random stream is left alone."""
    x, v = s.randn(4, 16, gen=s.generator(5)), s.randn(4, 16, gen=s.generator(6))
    return threads_generator(lambda gen: sde_step(x, v, SIGMA, SIGMA_NEXT, ETA, gen))


@check("advantages", 1e-5)
def advantages_match_and_are_bounded(s: Setting) -> Outcome:
    """Group advantages (std + 1e-8) equal the loop and are clipped to ±5."""
    gen = s.generator(2)
    # Groups of 32: one outlier among G rewards has |A| = sqrt(G - 1) = 5.6 > 5, so the
    # clip binds (with groups of 8 it never could: sqrt(7) < 5).
    rewards = s.randn(3 * 32, gen=gen)
    rewards[3] = 1e6
    a = advantages(rewards, 32)
    loop = torch.tensor(naive_advantages(rewards.tolist(), 32), dtype=s.dtype)
    return worst([compare(loop, a, "batched vs loop"), within(a.abs().max().item(), 5.0, "max |A|")])


@check("clip-range", 0.0, measure="abs", gradients=True)
def clip_range_stops_gradient(s: Setting) -> Outcome:
    """With clip range 1e-4 samples whose ratio left the range get no gradient."""
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
    "dancegrpo",
    __doc__ or "",
    (
        logprob_matches,
        step_has_claimed_law,
        step_threads_generator,
        advantages_match_and_are_bounded,
        clip_range_stops_gradient,
    ),
    shapes=(f"B{B}-C{C}-{HW}x{HW}", "64x4096 draws for the law"),
)
