"""Declared verification of the DiffusionNFT loss.

Compared: the loss as written (v⁺ and v⁻ built per sample) against the expanded batched
form, value and gradient with respect to v_θ. Properties: (v⁺ + v⁻)/2 = v_old; the
reward weight r lies in [0, 1] with r = ½ at A = 0; without the KL term the loss is
stationary at v_θ = v_old only when r = ½.
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.diffusionnft.expanded import branch_residuals, nft_loss, reward_weights
from kernels.diffusionnft.naive import naive_nft_loss
from kernels.measures import Outcome, Setting, compare, compare_forms, gradients

B, C, HW = 6, 3, 4
KW = {"beta": 0.1, "a_max": 5.0, "beta_kl": 0.01}


def _batch(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    shape = (B, C, HW, HW)
    v_theta, v_old, v_ref = (s.randn(*shape, gen=gen) for _ in range(3))
    x0, noise = s.randn(*shape, gen=gen), s.randn(*shape, gen=gen)
    t = s.rand(B, gen=gen)
    x_t = (1 - t.view(-1, 1, 1, 1)) * x0 + t.view(-1, 1, 1, 1) * noise
    adv = s.randn(B, gen=gen, scale=4.0)
    return v_theta, v_old, v_ref, x_t, x0, t, adv


@check("expanded-vs-written", 1e-5, gradients=True)
def expanded_matches_written(s: Setting) -> Outcome:
    """The expanded batched loss equals the loss as written, with its gradient."""
    v_theta, v_old, v_ref, x_t, x0, t, adv = _batch(s, 0)
    return compare_forms(
        lambda v: naive_nft_loss(v, v_old, v_ref, x_t, x0, t, adv.tolist(), **KW),
        lambda v: nft_loss(v, v_old, v_ref, x_t, x0, t, adv, **KW),
        (v_theta,),
        outputs=("loss",),
        grads=("v_theta",),
    )


@check("branches-average", 1e-6)
def branches_average_to_old(s: Setting) -> Outcome:
    """(v+ + v-)/2 = v_old, measured on the expanded form's two branches.

    Measured on the expanded form's residuals: x̂₀± = x_t − t·v±, so (v⁺ + v⁻)/2 = v_old
        is (x̂₀⁺ + x̂₀⁻)/2 = x_t − t·v_old."""
    v_theta, v_old, _, x_t, x0, t, _ = _batch(s, 1)
    pos, neg = branch_residuals(v_theta, v_old, x_t, x0, t, KW["beta"])
    expected = x_t - t.view(-1, 1, 1, 1) * v_old - x0
    return compare(expected, (pos + neg) / 2, "mean of the two branches' x0 residuals against the old model's")


@check("reward-weight", 0.0, measure="abs")
def reward_weight_range(s: Setting) -> Outcome:
    """r = clip(clip(A, ±A_max)/A_max/2 + 1/2, 0, 1) lies in [0, 1] and is 1/2 at A
    = 0."""
    adv = torch.linspace(-50, 50, 1001, dtype=torch.float64).to(s.device, s.dtype)
    r = reward_weights(adv, KW["a_max"])
    outside = ((r < 0) | (r > 1)).sum().item()
    at_zero = reward_weights(torch.zeros(1, device=s.device), KW["a_max"]).item()
    err = abs(at_zero - 0.5) + outside
    return Outcome(err, err, f"r in [{r.min().item():.3g}, {r.max().item():.3g}], r(0) = {at_zero}")


@check("neutral-is-stationary", 1e-6, measure="abs", gradients=True)
def stationary_when_neutral(s: Setting) -> Outcome:
    """With A = 0 (r = 1/2) and no KL the loss has zero gradient at v_theta = v_old;
    a positive advantage moves it."""
    _, v_old, _, x_t, x0, t, _ = _batch(s, 2)
    kw = {**KW, "beta_kl": 0.0}
    neutral = torch.zeros(B, device=s.device, dtype=s.dtype)
    _, (g0,) = gradients(lambda v: nft_loss(v, v_old, v_old, x_t, x0, t, neutral, **kw), (v_old,))
    _, (g1,) = gradients(lambda v: nft_loss(v, v_old, v_old, x_t, x0, t, neutral + 3.0, **kw), (v_old,))
    moved = g1.abs().max().item()
    out = compare(torch.zeros_like(g0), g0)
    if moved == 0.0:
        return Outcome(float("inf"), float("inf"), "a positive advantage produced no gradient")
    return Outcome(
        out.max_abs,
        out.max_abs,
        f"gradient at v_theta = v_old: {out.max_abs:.2g} with A = 0, {moved:.2g} with A = 3",
    )


VERIFICATION = Verification(
    "diffusionnft",
    __doc__ or "",
    (expanded_matches_written, branches_average_to_old, reward_weight_range, stationary_when_neutral),
    shapes=(f"B{B}-C{C}-{HW}x{HW}",),
)
