"""Declared verification of PPO's advantage estimate and clipped surrogate.

Compared: GAE as one triangular matrix product against the backward loop over time
(values and gradients, with episode ends inside the rollout); the batched clipped loss
against the token loop. Properties: λ = 0 gives the TD residual, γ = λ = 1 the Monte
Carlo return minus the value; clipped tokens get no gradient.
"""

from __future__ import annotations

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare_all,
    compare_forms,
    count,
    gradients,
    worst,
)
from kernels.ppo.naive import naive_clipped_loss, naive_gae
from kernels.ppo.vectorized import clipped_loss, gae

T, GAMMA, LAM = 75, 0.99, 0.95


def _rollout(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    rewards, values = s.randn(T, gen=gen), s.randn(T + 1, gen=gen)
    dones = (s.rand(T, gen=gen) < 0.08).to(s.dtype)
    return rewards, values, dones


def gae_matches_loop(s: Setting) -> Outcome:
    rewards, values, dones = _rollout(s, 0)
    out = compare_forms(
        lambda r, v: naive_gae(r, v, dones, GAMMA, LAM),
        lambda r, v: gae(r, v, dones, GAMMA, LAM),
        (rewards, values),
        (s.randn(T, gen=s.generator(1)),),
        outputs=("advantages",),
        grads=("rewards", "values"),
    )
    ends = int(dones.sum())
    return Outcome(out.max_abs, out.max_rel, f"{out.detail}; {ends} episode ends in {T} steps")


def limits(s: Setting) -> Outcome:
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


def clipped_loss_matches(s: Setting) -> Outcome:
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
    technique="ppo",
    compares="GAE as a masked triangular matrix product against the backward loop over time "
    "(with episode "
    "ends), and the batched clipped surrogate against the token loop: values and gradients",
    shapes=(f"T{T}, gamma {GAMMA}, lambda {LAM}",),
    gradients=True,
    checks=(
        Check(
            "gae-vs-loop",
            "GAE in one matrix product equals the backward recursion, across episode ends, with gradients.",
            gae_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "gae-limits",
            "lambda = 0 gives the TD residual; gamma = lambda = 1 gives the return minus the value.",
            limits,
            tolerance=1e-5,
        ),
        Check(
            "clipped-surrogate",
            "The batched clipped loss equals the token loop and clipped tokens get no gradient.",
            clipped_loss_matches,
            tolerance=1e-5,
            gradients=True,
        ),
    ),
)
