"""Declared verification of SpecForge's draft training and speculative sampling.

Compared: the batched EAGLE-3 soft cross-entropy over 7 test-time-training steps against
a position loop (loss and gradient). Properties: speculative sampling emits tokens with
exactly the target distribution: by enumeration, and by Monte Carlo with honest
statistics (every token's frequency within a Bernstein bound that fails a correct
sampler with probability below 1e-6), in one call of 400,000 trials and pooled over
4,000 calls with their own seeds; the sampler threads the caller's generator.
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.measures import Outcome, Setting, compare, compare_all, gradients
from kernels.specforge.draft import TTT_STEPS, draft_loss, speculative_sample
from kernels.specforge.naive import naive_draft_loss, output_law
from kernels.stats import FALSE_FAILURE, bernstein_halfwidth, outside, threads_generator

B, T, V = 2, 13, 29
TRIALS = 400_000


@check("draft-loss-vs-loop", 1e-5, gradients=True)
def loss_matches_loop(s: Setting) -> Outcome:
    """The batched masked soft cross-entropy equals the position loop, with its gradient."""
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


@check("law-enumerated", 1e-12, measure="abs")
def law_by_enumeration(s: Setting) -> Outcome:
    """Accept with min(1, p/q), else resample from max(0, p - q): the emitted token has
    exactly the target distribution p."""
    p, q = _pair(s, 1)
    return compare(p, output_law(p, q), "law of the emitted token against the target p")


def _law_outcome(tokens: torch.Tensor, p: torch.Tensor, what: str) -> Outcome:
    """How far the empirical law of ``tokens`` leaves the Bernstein band around p: per
    token the indicator has variance p(1 − p) and range max(p, 1 − p); union over V."""
    n = tokens.numel()
    empirical = torch.bincount(tokens, minlength=V).double() / n
    p = p.double().cpu()
    band = torch.tensor([bernstein_halfwidth(n, float(x * (1 - x)), float(max(x, 1 - x)), tests=V) for x in p])
    excess = outside(empirical - p, band)
    tv = 0.5 * (empirical - p).abs().sum().item()
    return Outcome(excess, excess, f"{what}: {n} tokens, total variation to p {tv:.4f}, band {band.max():.3g}")


@check("law-monte-carlo", 0.0, measure="abs", false_failure=FALSE_FAILURE)
def law_by_monte_carlo(s: Setting) -> Outcome:
    """Over 400,000 trials the frequency of every token lies within the Bernstein bound
    of its target probability p (a correct sampler fails with probability below 1e-6)."""
    p, q = _pair(s, 2)
    out = _law_outcome(speculative_sample(p, q, TRIALS, s.generator(3)), p, "one call")
    draft_tv = 0.5 * (q - p).abs().sum().item()
    return Outcome(out.max_abs, out.max_rel, f"{out.detail} (the draft q alone is {draft_tv:.3f} away)")


@check("law-over-seeds", 0.0, measure="abs", false_failure=FALSE_FAILURE)
def law_over_seeds(s: Setting) -> Outcome:
    """Pooled over 4,000 calls with seeds of their own, 4 trials each, the emitted tokens
    follow p within the Bernstein bound: every random decision of a call (draft, accept,
    resample) comes from the caller's generator, none from a stream fixed inside."""
    p, q = _pair(s, 2)
    tokens = torch.cat([speculative_sample(p, q, 4, torch.Generator().manual_seed(s.seed + i)) for i in range(4000)])
    return _law_outcome(tokens, p, "4,000 seeds")


@check("sampler-threads-generator", 0.0, measure="abs")
def sampler_threads_generator(s: Setting) -> Outcome:
    """The sampler draws from the generator it is given: the same seed gives the same
    tokens, another seed other tokens, and torch's global random stream is left alone."""
    p, q = _pair(s, 2)
    return threads_generator(lambda gen: speculative_sample(p, q, 64, gen))


VERIFICATION = Verification(
    "specforge",
    __doc__ or "",
    (loss_matches_loop, law_by_enumeration, law_by_monte_carlo, law_over_seeds, sampler_threads_generator),
    shapes=(f"steps{TTT_STEPS}-B{B}-T{T}-V{V}", f"V{V}, {TRIALS} trials", "4000 seeds x 4 trials"),
)
