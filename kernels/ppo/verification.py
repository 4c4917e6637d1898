"""Declared verification of PPO's advantage estimate and clipped surrogate.

Compared: GAE as one triangular matrix product against the backward loop over time
(values and gradients, with episode ends inside the rollout); the batched clipped loss
against the token loop. Properties: λ = 0 gives the TD residual, γ = λ = 1 the Monte
Carlo return minus the value; clipped tokens get no gradient.
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.families import BATCH_OF_ONE
from kernels.measures import Outcome, Setting, compare_all, compare_forms, count, gradients, worst
from kernels.ppo.naive import naive_clipped_loss, naive_gae
from kernels.ppo.vectorized import clipped_loss, gae

T, GAMMA, LAM = 75, 0.99, 0.95


def _rollout(s: Setting, offset: int, steps: int = T):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    rewards, values = s.randn(steps, gen=gen), s.randn(steps + 1, gen=gen)
    dones = (s.rand(steps, gen=gen) < 0.08).to(s.dtype)
    return rewards, values, dones


@check("gae-vs-loop", 1e-5, gradients=True, covers=(BATCH_OF_ONE,))
def gae_matches_loop(s: Setting) -> Outcome:
    """GAE in one matrix product equals the backward recursion, across episode ends,
    with gradients, also for a rollout of one step."""
    results = []
    for steps in (T, 1):
        rewards, values, dones = _rollout(s, 0, steps)
        out = compare_forms(
            lambda r, v, d=dones: naive_gae(r, v, d, GAMMA, LAM),
            lambda r, v, d=dones: gae(r, v, d, GAMMA, LAM),
            (rewards, values),
            (s.randn(steps, gen=s.generator(1)),),
            outputs=("advantages",),
            grads=("rewards", "values"),
            tag=f"T{steps}",
        )
        results.append(
            Outcome(out.max_abs, out.max_rel, f"{out.detail}; {int(dones.sum())} episode ends in {steps} steps")
        )
    return worst(results)


@check("gae-limits", 1e-5)
def limits(s: Setting) -> Outcome:
    """lambda = 0 gives the TD residual; gamma = lambda = 1 gives the return minus
    the value."""
    rewards, values, _ = _rollout(s, 2)
    none = torch.zeros_like(rewards)
    td = rewards + GAMMA * values[1:] - values[:-1]
    returns = torch.flip(torch.cumsum(torch.flip(rewards, [0]), 0), [0]) + values[-1]
    return compare_all(
        [
            ("lambda=0 is the TD residual", td, gae(rewards, values, none, GAMMA, 0.0)),
            (
                "gamma=lambda=1 is return - value",
                returns - values[:-1],
                gae(rewards, values, none, 1.0, 1.0),
            ),
        ]
    )


@check("clipped-surrogate", 1e-5, gradients=True)
def clipped_loss_matches(s: Setting) -> Outcome:
    """The batched clipped loss equals the token loop and clipped tokens get no
    gradient."""
    gen = s.generator(3)
    logp_old = -s.rand(T, gen=gen) * 2
    logp = logp_old + s.randn(T, gen=gen, scale=0.3)
    adv = s.randn(T, gen=gen)
    (l1,), (d1,) = gradients(lambda lp: naive_clipped_loss(lp, logp_old, adv), (logp,))
    (l2,), (d2,) = gradients(lambda lp: clipped_loss(lp, logp_old, adv), (logp,))
    ratio = torch.exp(logp - logp_old)
    clipped = ((adv > 0) & (ratio > 1.2)) | ((adv < 0) & (ratio < 0.8))
    leaked = int((d2[clipped] != 0).sum())
    out = compare_all([("loss", l1, l2), ("dlogp", d1, d2)])
    checked = worst([out, count(leaked, 0)])
    return Outcome(
        checked.max_abs,
        checked.max_rel,
        f"{out.detail}; {int(clipped.sum())} clipped tokens, all with zero gradient",
    )


VERIFICATION = Verification(
    "ppo",
    __doc__ or "",
    (gae_matches_loop, limits, clipped_loss_matches),
    shapes=(f"T{T}, gamma {GAMMA}, lambda {LAM}",),
)
