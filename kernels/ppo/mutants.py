"""Bugs a person makes in vectorised GAE and the PPO surrogate."""

from __future__ import annotations

from kernels.mutation import Mutant

_GAE = "kernels.ppo.vectorized:gae"

MUTANTS = (
    Mutant(
        "inclusive-episode-count",
        "off-by-one in the cumulative sum of episode ends: D_u counts an end at u itself, so "
        "the step that ends an episode is cut off from its own episode",
        _GAE,
        "ends = torch.cat([dones.new_zeros(1), dones.cumsum(0)[:-1]])",
        "ends = dones.cumsum(0)",
        "gae-vs-loop",
    ),
    Mutant(
        "bootstrap-through-done",
        "the TD target bootstraps from the next value even when the episode ended",
        _GAE,
        "delta = rewards + gamma * values[1:] * keep - values[:-1]",
        "delta = rewards + gamma * values[1:] - values[:-1]",
        "gae-vs-loop",
    ),
    Mutant(
        "lambda-forgotten",
        "the decay of the residuals is γ instead of γλ",
        _GAE,
        "torch.full_like(span, gamma * lam)",
        "torch.full_like(span, gamma)",
        "gae-limits",
    ),
    Mutant(
        "strictly-later",
        "the triangular mask starts after t, so δ_t is left out of A_t",
        _GAE,
        "later = t[None, :] >= t[:, None]",
        "later = t[None, :] > t[:, None]",
        "gae-vs-loop",
    ),
    Mutant(
        "optimistic-surrogate",
        "the surrogate takes the larger of the clipped and unclipped terms",
        "kernels.ppo.vectorized:clipped_loss",
        "-torch.minimum(",
        "-torch.maximum(",
        "clipped-surrogate",
    ),
)
