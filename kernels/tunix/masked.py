"""The same loss over the whole episode at once: one forward pass gives every position's
logits, the constraint masks are applied, and a loss mask (1 on model tokens, 0 on
prompt and tool tokens) keeps the environment's tokens out of the objective, so they
receive exactly zero gradient."""

from __future__ import annotations

import torch

from kernels.tunix.rollout import MODEL, VOCAB, Policy, Rollout, policy_logits

__all__ = ["episode_loss", "loss_mask", "policy_loss"]


def loss_mask(episode: Rollout) -> torch.Tensor:
    return torch.tensor([role == MODEL for role in episode.roles[1:]])


def episode_loss(logits: torch.Tensor, episode: Rollout, advantage: float) -> torch.Tensor:
    """logits [L−1, V]: the policy's predictions for tokens 1..L−1
    (``policy_logits(policy, tokens[:-1])``)."""
    allowed = torch.zeros(
        len(episode.tokens) - 1, len(VOCAB), dtype=torch.bool, device=logits.device
    )
    for t, options in episode.allowed.items():
        allowed[t - 1, options] = True
    constrained = logits.masked_fill(~allowed, float("-inf"))
    logp = torch.log_softmax(constrained, dim=-1)
    target = torch.tensor(episode.tokens[1:], device=logits.device)
    mask = loss_mask(episode).to(logits.device)
    picked = torch.where(
        mask, logp.gather(1, target[:, None])[:, 0], torch.zeros_like(target, dtype=logits.dtype)
    )
    return -(advantage * picked).sum() / mask.sum()


def policy_loss(policy: Policy, episode: Rollout, advantage: float) -> torch.Tensor:
    return episode_loss(policy_logits(policy, episode.tokens[:-1]), episode, advantage)
