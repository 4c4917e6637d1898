"""Bugs a person makes in DanceGRPO's closed forms."""

from __future__ import annotations

from kernels.mutation import Mutant

_SDE = "kernels.dancegrpo.sde"

MUTANTS = (
    Mutant(
        "std-without-sqrt",
        "the step's standard deviation is η·Δσ instead of η·sqrt(Δσ) in the log-probability",
        f"{_SDE}:step_logprob",
        "std = eta * math.sqrt(sigma - sigma_next)",
        "std = eta * (sigma - sigma_next)",
        "logprob-vs-closed-form",
    ),
    Mutant(
        "drift-sign",
        "the SDE step moves along +v·Δσ instead of −v·Δσ",
        f"{_SDE}:sde_step",
        "return x + (sigma_next - sigma) * v + std * noise",
        "return x + (sigma - sigma_next) * v + std * noise",
        "step-law",
    ),
    Mutant(
        "logprob-summed",
        "the per-sample log-probability is summed over the dimensions instead of averaged",
        f"{_SDE}:step_logprob",
        "return logp.flatten(1).mean(-1)",
        "return logp.flatten(1).sum(-1)",
        "logprob-vs-closed-form",
    ),
    Mutant(
        "advantages-unclipped",
        "the advantages are not clipped to ±5",
        f"{_SDE}:advantages",
        "return a.clamp(-clip, clip).flatten()",
        "return a.flatten()",
        "advantages",
    ),
    Mutant(
        "pessimistic-bound-inverted",
        "the clipped loss takes the smaller of the two terms, so clipped samples keep a gradient",
        f"{_SDE}:clipped_loss",
        "return torch.maximum(-adv * ratio,",
        "return torch.minimum(-adv * ratio,",
        "clip-range",
    ),
    Mutant(
        "noise-from-the-global-stream",
        "the step's noise is drawn from torch's global stream, not the caller's generator",
        f"{_SDE}:sde_step",
        "noise = torch.randn(x.shape, generator=gen, dtype=torch.float64)",
        "noise = torch.randn(x.shape, dtype=torch.float64)",
        "step-threads-generator",
        kind="statistics",
    ),
    Mutant(
        "noise-from-a-fixed-seed",
        "the step's noise comes from a generator seeded inside the function: every step of every rollout "
        "adds the same noise",
        f"{_SDE}:sde_step",
        "noise = torch.randn(x.shape, generator=gen, dtype=torch.float64)",
        "noise = torch.randn(x.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)",
        "step-threads-generator",
        kind="statistics",
    ),
)
