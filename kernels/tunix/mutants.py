"""Bugs a person makes in an agentic rollout's loss masking and its tool."""

from __future__ import annotations

from kernels.mutation import Mutant

_LOSS = "kernels.tunix.masked:episode_loss"

MUTANTS = (
    Mutant(
        "mask-of-the-inputs",
        "the loss mask takes the roles of the conditioning tokens (roles[:-1]) instead of "
        "the predicted ones, so tool tokens are trained on",
        "kernels.tunix.masked:loss_mask",
        "episode.roles[1:]",
        "episode.roles[:-1]",
        "tool-tokens-no-gradient",
    ),
    Mutant(
        "normaliser-unconstrained",
        "the log-softmax is taken before the constrained-decoding mask",
        _LOSS,
        "logp = torch.log_softmax(constrained, dim=-1)",
        "logp = torch.log_softmax(logits, dim=-1)",
        "masked-vs-loop",
    ),
    Mutant(
        "mean-over-all-tokens",
        "the loss is averaged over every token of the episode, not over the model's",
        _LOSS,
        "return -(advantage * picked).sum() / mask.sum()",
        "return -(advantage * picked).sum() / len(target)",
        "masked-vs-loop",
    ),
    Mutant(
        "calculator-ops-swapped",
        "the calculator multiplies on + and adds on *",
        "kernels.tunix.rollout:calculator",
        'if op == "+"',
        'if op == "*"',
        "tool-and-determinism",
    ),
    Mutant(
        "recurrence-transposed",
        "the shared policy's recurrence multiplies the state by Uᵀ instead of U",
        "kernels.tunix.rollout:policy_logits",
        "policy.recur @ h",
        "policy.recur.T @ h",
        "masked-vs-loop",
        kind="independent-reference",
    ),
    Mutant(
        "rollout-ignores-generator",
        "the rollout samples the model's tokens from torch's global stream, not the caller's generator",
        "kernels.tunix.rollout:rollout",
        "torch.multinomial(masked.softmax(-1), 1, generator=gen)",
        "torch.multinomial(masked.softmax(-1), 1)",
        "tool-and-determinism",
        kind="statistics",
    ),
)
