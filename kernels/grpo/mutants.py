"""Bugs a person makes in batched GRPO."""

from __future__ import annotations

from kernels.mutation import Mutant

_ADV = "kernels.grpo.batched:grpo_advantages"
_LOSS = "kernels.grpo.batched:grpo_loss"

MUTANTS = (
    Mutant(
        "population-std",
        "the group standard deviation is the population one, not TRL's Bessel-corrected one",
        _ADV,
        "r.std(-1, keepdim=True)",
        "r.std(-1, keepdim=True, correction=0)",
        "batched-vs-loops",
    ),
    Mutant(
        "interleaved-groups",
        "the rewards are reshaped to [G, groups] and transposed: completion i of a group is "
        "taken from every groups-th row, a swapped index",
        _ADV,
        "r = rewards.view(-1, group)",
        "r = rewards.view(group, -1).T",
        "batched-vs-loops",
    ),
    Mutant(
        "no-std-epsilon",
        "the advantage divides by the bare std: NaN for a group whose rewards are all equal",
        _ADV,
        "(r.std(-1, keepdim=True) + 1e-4)",
        "r.std(-1, keepdim=True)",
        "advantage-moments",
    ),
    Mutant(
        "max-instead-of-min",
        "the surrogate takes the larger of the clipped and unclipped terms, so clipped tokens keep their gradient",
        _LOSS,
        "-torch.minimum(ratio * a,",
        "-torch.maximum(ratio * a,",
        "clipped-no-gradient",
    ),
    Mutant(
        "mean-over-padding",
        "the token loss is averaged over every position, padding included",
        _LOSS,
        "/ m.sum().clamp(min=1)",
        "/ m.numel()",
        "batched-vs-loops",
    ),
)
