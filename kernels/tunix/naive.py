"""The policy-gradient loss of an agentic episode, the obvious way: walk the episode,
and for each token the model wrote add −A · log π(token | prefix) under the constraint
it was sampled with; skip prompt and tool tokens; divide by the number of model tokens.

The policy's recurrence h_t = tanh(E[x_t] + U h_{t−1}), logits W h_t, is run here token
by token, apart from the rollout's own code.
"""

from __future__ import annotations

import torch

from kernels.tunix.rollout import MODEL, Policy, Rollout

__all__ = ["naive_episode_loss"]


def naive_episode_loss(policy: Policy, episode: Rollout, advantage: float) -> torch.Tensor:
    total = policy.embed.new_zeros(())
    count = 0
    h = policy.embed.new_zeros(policy.embed.shape[1])
    for t in range(1, len(episode.tokens)):
        h = torch.tanh(policy.embed[episode.tokens[t - 1]] + policy.recur @ h)  # state after token t − 1
        if episode.roles[t] != MODEL:
            continue
        allowed = episode.allowed[t]
        logp = (policy.head @ h)[allowed].log_softmax(-1)[allowed.index(episode.tokens[t])]
        total = total - advantage * logp
        count += 1
    return total / count
