"""The policy-gradient loss of an agentic episode, the obvious way: walk the episode,
and for each token the model wrote add −A · log π(token | prefix) under the constraint
it was sampled with; skip prompt and tool tokens; divide by the number of model tokens."""

from __future__ import annotations

import torch

from kernels.tunix.rollout import MODEL, Policy, Rollout

__all__ = ["naive_episode_loss"]


def naive_episode_loss(policy: Policy, episode: Rollout, advantage: float) -> torch.Tensor:
    total = policy.embed.new_zeros(())
    count = 0
    for t in range(1, len(episode.tokens)):
        if episode.roles[t] != MODEL:
            continue
        logits = policy.logits(episode.tokens[:t])[-1]
        allowed = episode.allowed[t]
        logp = logits[allowed].log_softmax(-1)[allowed.index(episode.tokens[t])]
        total = total - advantage * logp
        count += 1
    return total / count
