"""A multi-turn agentic rollout with a calculator tool, in the shape Tunix's agentic RL uses.

Tokens: digits 0–9, ``+`` and ``*``, ``<call>`` ``</call>`` around a tool call, ``<out>``
``</out>`` around the tool's answer, ``<eos>``. Each turn the policy writes a call
``<call> a op b </call>`` (constrained decoding keeps it well formed); the environment
runs the calculator and appends ``<out> digits </out>``. Every token records who wrote
it: the prompt, the model, or the tool. Only model tokens are the policy's actions.

The policy is a tiny recurrent language model: h_t = tanh(E[x_t] + U h_{t−1}), logits W h_t.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

__all__ = [
    "MODEL",
    "PROMPT",
    "TOOL",
    "VOCAB",
    "Policy",
    "Rollout",
    "calculator",
    "init_policy",
    "policy_logits",
    "rollout",
]

VOCAB = [*"0123456789", "+", "*", "<call>", "</call>", "<out>", "</out>", "<eos>"]
ID = {tok: i for i, tok in enumerate(VOCAB)}
DIGITS = [ID[d] for d in "0123456789"]
OPS = [ID["+"], ID["*"]]
PROMPT, MODEL, TOOL = 0, 1, 2


@dataclass(frozen=True)
class Policy:
    embed: torch.Tensor  # [V, d]
    recur: torch.Tensor  # [d, d]
    head: torch.Tensor  # [V, d]

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.embed, self.recur, self.head


def policy_logits(policy: Policy, tokens: list[int] | torch.Tensor) -> torch.Tensor:
    """Next-token logits after each prefix: [len(tokens), V]."""
    h = policy.embed.new_zeros(policy.embed.shape[1])
    out = []
    for tok in tokens:
        h = torch.tanh(policy.embed[int(tok)] + policy.recur @ h)
        out.append(policy.head @ h)
    return torch.stack(out)


def init_policy(d: int, gen: torch.Generator, device: torch.device, dtype: torch.dtype) -> Policy:
    def r(*shape: int, scale: float) -> torch.Tensor:
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(device, dtype)

    return Policy(
        r(len(VOCAB), d, scale=1.0), r(d, d, scale=0.5 * d**-0.5), r(len(VOCAB), d, scale=d**-0.5)
    )


def calculator(tokens: list[int]) -> list[int]:
    """The tool: evaluate ``a op b`` over single digits, answer as digit tokens."""
    a, op, b = VOCAB[tokens[0]], VOCAB[tokens[1]], VOCAB[tokens[2]]
    value = int(a) + int(b) if op == "+" else int(a) * int(b)
    return [ID[c] for c in str(value)]


@dataclass
class Rollout:
    tokens: list[int] = field(default_factory=list)
    roles: list[int] = field(default_factory=list)
    #: For each token written by the model, the tokens it was allowed to choose from.
    allowed: dict[int, list[int]] = field(default_factory=dict)
    calls: list[tuple[list[int], list[int]]] = field(default_factory=list)

    def add(self, token: int, role: int, allowed: list[int] | None = None) -> None:
        if allowed is not None:
            self.allowed[len(self.tokens)] = allowed
        self.tokens.append(token)
        self.roles.append(role)


def rollout(policy: Policy, turns: int, gen: torch.Generator) -> Rollout:
    """Sample a multi-turn episode: the policy writes calls, the tool answers."""
    episode = Rollout()
    episode.add(ID["<eos>"], PROMPT)  # a one-token prompt

    def choose(allowed: list[int]) -> int:
        with torch.no_grad():
            logits = policy_logits(policy, episode.tokens)[-1].double().cpu()
        masked = torch.full_like(logits, float("-inf"))
        masked[allowed] = logits[allowed]
        token = int(torch.multinomial(masked.softmax(-1), 1, generator=gen))
        episode.add(token, MODEL, allowed)
        return token

    for _ in range(turns):
        choose([ID["<call>"]])
        expression = [choose(DIGITS), choose(OPS), choose(DIGITS)]
        choose([ID["</call>"]])
        answer = calculator(expression)
        episode.calls.append((expression, answer))
        for tok in (ID["<out>"], *answer, ID["</out>"]):
            episode.add(tok, TOOL)
    choose([ID["<eos>"]])
    return episode
