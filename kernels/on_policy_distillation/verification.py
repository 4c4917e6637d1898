"""Declared verification of on-policy distillation's reverse KL.

Compared: the full-vocabulary sum via F.kl_div against a per-token, per-vocabulary loop
(values and gradients with respect to the student logits), also for logits of order
1e2. Properties of the sampled estimator log p_s(x) − log p_t(x), x ~ p_s, with honest
statistics: its mean lies within a Bernstein bound of the exact reverse KL and its
reported standard error within a Bernstein bound of the exact one (both worked out here
from the distributions, each failing a correct kernel with probability below 1e-6); it
draws from the caller's generator (same seed, same draws; another seed, other draws;
torch's global stream untouched).
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.families import EXTREME_LOGITS
from kernels.measures import Outcome, Setting, compare_all, gradients, worst
from kernels.on_policy_distillation.kl import reverse_kl, sampled_reverse_kl
from kernels.on_policy_distillation.naive import naive_reverse_kl
from kernels.stats import FALSE_FAILURE, bernstein_halfwidth, outside, threads_generator

N, V, DRAWS = 13, 37, 40_000


def _logits(s: Setting, offset: int, scale: float = 2.0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = s.generator(offset)
    student = s.randn(N, V, gen=gen, scale=scale)
    teacher = student + s.randn(N, V, gen=gen, scale=scale / 2)
    return student, teacher


@check("full-vocab-vs-loop", 1e-5, gradients=True, covers=(EXTREME_LOGITS,))
def full_vocab_matches_loop(s: Setting) -> Outcome:
    """The full-vocabulary reverse KL equals the per-token loop, with its gradient, also
    for logits of order 1e2."""
    pairs = []
    for scale in (2.0, 100.0):
        student, teacher = _logits(s, 0, scale)
        (k1,), (g1, _) = gradients(naive_reverse_kl, (student, teacher))
        (k2,), (g2, _) = gradients(reverse_kl, (student, teacher))
        pairs += [(f"reverse KL, logits x{scale:g}", k1, k2), (f"d student logits, x{scale:g}", g1, g2)]
    return compare_all(pairs)


def _moments(student: torch.Tensor, teacher: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Per position, exactly: the draw X = log p_s(x) − log p_t(x) under x ~ p_s has mean μ
    (the reverse KL), variance σ², fourth central moment, and range |X − μ| ≤ M."""
    ls, lt = student.double().cpu().log_softmax(-1), teacher.double().cpu().log_softmax(-1)
    p, x = ls.exp(), ls - lt
    mu = (p * x).sum(-1)
    dev = x - mu[:, None]
    return mu, (p * dev**2).sum(-1), (p * dev**4).sum(-1), dev.abs().amax(-1)


@check("sampled-unbiased", 0.0, measure="abs", false_failure=FALSE_FAILURE)
def sampled_is_unbiased(s: Setting) -> Outcome:
    """At every position the sampled estimator's mean over 40,000 draws lies within the
    Bernstein bound of the exact reverse KL (exact variance and range; union over
    positions: a correct sampler fails with probability below 1e-6)."""
    student, teacher = _logits(s, 1)
    mu, var, _, bound = _moments(student, teacher)
    estimate, _ = sampled_reverse_kl(student, teacher, DRAWS, s.generator(2))
    t = torch.tensor([bernstein_halfwidth(DRAWS, float(v), float(m), tests=N) for v, m in zip(var, bound, strict=True)])
    dev = estimate.double().cpu() - mu
    excess = outside(dev, t)
    return Outcome(
        excess,
        excess,
        f"largest |estimate − exact| {dev.abs().max():.3g} against a bound of {t.min():.3g}..{t.max():.3g} "
        f"(exact KL {mu.min():.3g}..{mu.max():.3g}; standard errors {(var / DRAWS).sqrt().max():.2g})",
    )


@check("standard-error", 0.0, measure="abs", false_failure=FALSE_FAILURE)
def standard_error(s: Setting) -> Outcome:
    """The standard error the estimator reports is σ/√n: at every position its square
    times n lies within the Bernstein bounds of the exact variance σ² (worked out here from
    the distributions; a correct estimator fails with probability below 1e-6)."""
    student, teacher = _logits(s, 3)
    mu, var, fourth, bound = _moments(student, teacher)
    _, stderr = sampled_reverse_kl(student, teacher, DRAWS, s.generator(4))
    n = DRAWS
    results = []
    for i in range(N):
        # mean of Y = (X − μ)² within t_y of σ², the sample mean of X within t_x of μ; the
        # sample variance is n/(n−1)·(mean Y − (X̄ − μ)²)
        t_y = bernstein_halfwidth(n, float(fourth[i] - var[i] ** 2), float(max(bound[i] ** 2, var[i])), tests=2 * N)
        t_x = bernstein_halfwidth(n, float(var[i]), float(bound[i]), tests=2 * N)
        low, high = float(var[i]) - t_y - t_x**2, (float(var[i]) + t_y) * n / (n - 1)
        got = float(stderr[i]) ** 2 * n
        excess = max(0.0, low - got, got - high) / float(var[i])
        results.append(Outcome(excess, excess, f"position {i}: n·se² = {got:.4g}, σ² = {float(var[i]):.4g}"))
    return worst(results, f"n·se² within the bounds of σ² at all {N} positions (n = {n})")


@check("sampler-threads-generator", 0.0, measure="abs")
def sampler_threads_generator(s: Setting) -> Outcome:
    """The estimator draws from the generator it is given: the same seed gives the same
    draws, another seed other draws, and torch's global random stream is left alone."""
    student, teacher = _logits(s, 5)
    return threads_generator(lambda gen: sampled_reverse_kl(student, teacher, 64, gen))


VERIFICATION = Verification(
    "on-policy-distillation",
    __doc__ or "",
    (full_vocab_matches_loop, sampled_is_unbiased, standard_error, sampler_threads_generator),
    shapes=(f"N{N}-V{V}", f"{DRAWS} samples per position"),
)
