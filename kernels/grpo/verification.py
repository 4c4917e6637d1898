"""Declared verification of GRPO.

Compared: batched advantages and clipped loss (with a KL term) against the group /
token loops, values and gradients. Properties: in every group the advantages sum to 0
and have standard deviation ≈ 1; a token whose ratio is clipped gets no gradient.
"""

from __future__ import annotations

import torch

from kernels.checks import Verification, check
from kernels.families import FAR_FROM_UNIT
from kernels.grpo.batched import grpo_advantages, grpo_loss
from kernels.grpo.naive import naive_advantages, naive_grpo_loss
from kernels.measures import Outcome, Setting, compare, compare_all, count, gradients, worst

GROUPS, G, L = 5, 6, 13


def _batch(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    rewards = s.rand(GROUPS * G, gen=gen)
    logp_old = -s.rand(GROUPS * G, L, gen=gen) * 3
    logp = logp_old + s.randn(GROUPS * G, L, gen=gen, scale=0.3)
    logp_ref = logp_old + s.randn(GROUPS * G, L, gen=gen, scale=0.1)
    lengths = torch.randint(3, L + 1, (GROUPS * G,), generator=gen).to(s.device)
    mask = torch.arange(L, device=s.device)[None, :] < lengths[:, None]
    return rewards, logp, logp_old, logp_ref, mask


@check("batched-vs-loops", 1e-5, gradients=True)
def batched_matches_loops(s: Setting) -> Outcome:
    """Batched advantages and loss equal the loops, with the gradient."""
    rewards, logp, logp_old, logp_ref, mask = _batch(s, 0)
    a_loop = torch.tensor(naive_advantages(rewards.tolist(), G), dtype=s.dtype)
    a = grpo_advantages(rewards, G)
    kw = {"eps": 0.2, "eps_high": 0.28, "beta": 0.04}
    (l1,), (g1, _) = gradients(
        lambda lp, ref: naive_grpo_loss(lp, logp_old, a_loop.tolist(), mask, logp_ref=ref, **kw),
        (logp, logp_ref),
    )
    (l2,), (g2, _) = gradients(lambda lp, ref: grpo_loss(lp, logp_old, a, mask, logp_ref=ref, **kw), (logp, logp_ref))
    return compare_all([("advantages", a_loop, a), ("loss", l1, l2), ("dlogp", g1, g2)])


@check("advantage-moments", 1e-3, measure="abs", covers=(FAR_FROM_UNIT,))
def advantage_moments(s: Setting) -> Outcome:
    """Within each group the advantages sum to 0 and have standard deviation about
    1, also for rewards of order 1e6; a group whose rewards are all equal gets
    advantages of exactly 0.

    On random rewards, on rewards of order 1e6, and on groups whose rewards are all
        equal (std 0: the advantages must be exactly 0, not NaN)."""
    rewards = _batch(s, 1)[0]
    large = rewards * 1e6
    flat = rewards.clone().view(GROUPS, G)
    flat[::2] = flat[::2, :1]  # every other group answers identically
    results, text = [], []
    for name, r in (("random", rewards), ("x1e6", large)):
        a = grpo_advantages(r, G).view(GROUPS, G).double()
        sums = compare(torch.zeros(GROUPS, dtype=torch.float64), a.sum(-1).cpu(), f"{name}: group sums")
        stds = compare(torch.ones(GROUPS, dtype=torch.float64), a.std(-1).cpu(), f"{name}: group stds")
        results += [Outcome(sums.max_abs, sums.max_abs, sums.detail), Outcome(stds.max_abs, stds.max_abs, stds.detail)]
        text.append(f"{name}: max |sum A| {sums.max_abs:.2g}, max |std(A) - 1| {stds.max_abs:.2g}")
    same = grpo_advantages(flat.flatten(), G).view(GROUPS, G)[::2].double().cpu()
    tied = compare(torch.zeros_like(same), same, "groups with equal rewards")
    results.append(Outcome(tied.max_abs, tied.max_abs, tied.detail))
    out = worst(results)
    return Outcome(
        out.max_abs,
        out.max_abs,
        "; ".join(text) + f"; equal rewards give A = 0 (max |A| {tied.max_abs:.2g}); the 1e-4 in the "
        "denominator keeps std just below 1",
    )


@check("clipped-no-gradient", 0.0, measure="abs", gradients=True)
def clipped_tokens_have_no_gradient(s: Setting) -> Outcome:
    """Tokens whose ratio is clipped get exactly zero gradient; the others do not."""
    rewards, logp, logp_old, _, mask = _batch(s, 2)
    a = grpo_advantages(rewards, G)
    _, (grad,) = gradients(lambda lp: grpo_loss(lp, logp_old, a, mask), (logp,))
    ratio = torch.exp(logp - logp_old)
    sign = torch.sign(a)[:, None]
    clipped = ((sign > 0) & (ratio > 1.2)) | ((sign < 0) & (ratio < 0.8))
    active = mask & ~clipped
    wrong = int((grad[clipped & mask] != 0).sum()) + int((grad[active] == 0).sum()) + int((grad[~mask] != 0).sum())
    return count(
        wrong,
        0,
        f"{int((clipped & mask).sum())} clipped tokens with zero gradient, "
        f"{int(active.sum())} active tokens with non-zero gradient, padding zero",
    )


VERIFICATION = Verification(
    "grpo",
    __doc__ or "",
    (batched_matches_loops, advantage_moments, clipped_tokens_have_no_gradient),
    shapes=(f"groups{GROUPS}-G{G}-L{L} (ragged lengths)",),
)
