"""Bugs a person makes in SpecForge's draft loss and speculative sampling."""

from __future__ import annotations

from kernels.mutation import Mutant

_D = "kernels.specforge.draft"

MUTANTS = (
    Mutant(
        "log-softmax-over-positions",
        "the draft's log-softmax is taken over positions instead of the vocabulary",
        f"{_D}:draft_loss",
        "logq = draft_logits.float().log_softmax(-1)",
        "logq = draft_logits.float().log_softmax(-2)",
        "draft-loss-vs-loop",
    ),
    Mutant(
        "steps-summed",
        "the test-time-training steps are summed instead of averaged",
        f"{_D}:draft_loss",
        "/ m.sum((1, 2)).clamp(min=1)).mean()",
        "/ m.sum((1, 2)).clamp(min=1)).sum()",
        "draft-loss-vs-loop",
    ),
    Mutant(
        "acceptance-ratio-inverted",
        "a draft token is accepted with probability min(1, q/p) instead of min(1, p/q)",
        f"{_D}:speculative_sample",
        "p64[draft] / q64[draft]",
        "q64[draft] / p64[draft]",
        "law-monte-carlo",
    ),
    Mutant(
        "residual-reversed",
        "after a rejection the token is drawn from (q − p)+ instead of (p − q)+",
        f"{_D}:speculative_sample",
        "residual = (p64 - q64).clamp(min=0)",
        "residual = (q64 - p64).clamp(min=0)",
        "law-monte-carlo",
    ),
    Mutant(
        "accept-from-a-fixed-seed",
        "the accept step draws its uniforms from a generator seeded inside the function, so trial i of "
        "every call compares against the same uniform",
        f"{_D}:speculative_sample",
        "accept = torch.rand(trials, generator=gen, dtype=torch.float64)",
        "accept = torch.rand(trials, generator=torch.Generator().manual_seed(0), dtype=torch.float64)",
        "law-over-seeds",
        kind="statistics",
    ),
    Mutant(
        "resample-ignores-generator",
        "after a rejection the token is resampled from torch's global stream, not the caller's generator",
        f"{_D}:speculative_sample",
        "fallback = torch.multinomial(residual / residual.sum(), trials, replacement=True, generator=gen)",
        "fallback = torch.multinomial(residual / residual.sum(), trials, replacement=True)",
        "sampler-threads-generator",
        kind="statistics",
    ),
)
