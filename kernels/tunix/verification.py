"""Declared verification of the agentic rollout and its loss mask.

Compared: the masked whole-episode loss against a token-by-token loop over model tokens
(value and gradients of the policy's weights). Properties: prompt and tool tokens get
exactly zero gradient, model tokens do not; the tool answered every call correctly; a
seed reproduces the episode.
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.measures import Outcome, Setting, compare_forms, count, gradients, worst
from kernels.stats import threads_generator
from kernels.tunix.masked import episode_loss, loss_mask, policy_loss
from kernels.tunix.naive import naive_episode_loss
from kernels.tunix.rollout import VOCAB, Policy, calculator, init_policy, policy_logits, rollout

TURNS, D, ADV = 3, 16, 0.7


def _episode(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    policy = init_policy(D, s.generator(offset), s.device, s.dtype)
    return policy, rollout(policy, TURNS, s.generator(offset + 1))


@check("masked-vs-loop", 1e-5, gradients=True)
def masked_matches_loop(s: Setting) -> Outcome:
    """The masked episode loss equals the loop over model tokens, with the gradients of the policy."""
    policy, episode = _episode(s, 0)
    return compare_forms(
        lambda *w: naive_episode_loss(Policy(*w), episode, ADV),
        lambda *w: policy_loss(Policy(*w), episode, ADV),
        policy.tensors(),
        outputs=("loss",),
        grads=("embed", "recur", "head"),
    )


@check("tool-tokens-no-gradient", 0.0, measure="abs", gradients=True)
def tool_tokens_get_no_gradient(s: Setting) -> Outcome:
    """The loss mask gives tool and prompt tokens exactly zero gradient."""
    policy, episode = _episode(s, 2)
    logits = policy_logits(policy, episode.tokens[:-1]).detach()
    _, (grad,) = gradients(lambda lg: episode_loss(lg, episode, ADV), (logits,))
    mask = loss_mask(episode).to(grad.device)
    per_position = grad.abs().sum(-1)
    leaked = int((per_position[~mask] != 0).sum())
    silent = int((per_position[mask] == 0).sum())
    # Choices with one allowed token carry no information; they have zero gradient too.
    forced = sum(1 for t, options in episode.allowed.items() if len(options) == 1)
    tool = sum(1 for r in episode.roles if r == 2)
    return count(
        leaked + (silent - forced),
        0,
        f"{tool} tool tokens and the prompt: zero gradient; "
        f"{int(mask.sum()) - forced} free model choices: non-zero; {forced} forced model "
        "tokens: zero",
    )


@check("tool-and-determinism", 0.0, measure="abs")
def tool_answers_and_determinism(s: Setting) -> Outcome:
    """The calculator answers every call correctly, and the rollout draws from the
    generator it is given: the same seed reproduces the multi-turn episode, another seed
    gives another, and torch's global random stream is left alone."""
    policy, episode = _episode(s, 4)
    wrong = 0
    for expression, answer in episode.calls:
        a, op, b = (VOCAB[t] for t in expression)
        expected = int(a) + int(b) if op == "+" else int(a) * int(b)
        wrong += int("".join(VOCAB[t] for t in answer)) != expected
        wrong += calculator(expression) != answer
    seeded = threads_generator(lambda gen: torch.tensor(rollout(policy, TURNS, gen).tokens, dtype=torch.float64))
    text = " | ".join(f"{''.join(VOCAB[t] for t in e)}={''.join(VOCAB[t] for t in a)}" for e, a in episode.calls)
    return worst([count(wrong, 0), seeded], f"tool calls {text}; {seeded.detail}")


VERIFICATION = Verification(
    "tunix",
    __doc__ or "",
    (masked_matches_loop, tool_tokens_get_no_gradient, tool_answers_and_determinism),
    shapes=(f"{TURNS} turns, vocab {len(VOCAB)}, d{D}",),
)
