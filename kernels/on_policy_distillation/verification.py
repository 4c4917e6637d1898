"""Declared verification of on-policy distillation's reverse KL.

Compared: the full-vocabulary sum via F.kl_div against a per-token, per-vocabulary loop
(values and gradients with respect to the student logits). Property: the sampled
estimator log p_s(x) − log p_t(x) with x ~ p_s is unbiased: with 40,000 draws per position
its mean lies within 4 standard errors of the exact reverse KL.
"""

from __future__ import annotations

from kernels.checks import Check, Outcome, Setting, Verification, compare_all, gradients
from kernels.on_policy_distillation.kl import reverse_kl, sampled_reverse_kl
from kernels.on_policy_distillation.naive import naive_reverse_kl

N, V = 13, 37


def _logits(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    student = s.randn(N, V, gen=gen, scale=2.0)
    teacher = student + s.randn(N, V, gen=gen)
    return student, teacher


def full_vocab_matches_loop(s: Setting) -> Outcome:
    student, teacher = _logits(s, 0)
    (k1,), (g1, _) = gradients(naive_reverse_kl, (student, teacher))
    (k2,), (g2, _) = gradients(reverse_kl, (student, teacher))
    return compare_all([("reverse KL", k1, k2), ("d student logits", g1, g2)])


def sampled_is_unbiased(s: Setting) -> Outcome:
    student, teacher = _logits(s, 1)
    exact = reverse_kl(student, teacher).double()
    estimate, stderr = sampled_reverse_kl(student, teacher, 40_000, s.generator(2))
    z = ((estimate.double() - exact).abs() / stderr.double()).max().item()
    err = (estimate.double() - exact).abs().max().item()
    # Pass when every position is within 4 standard errors: report the excess over that.
    excess = max(0.0, z - 4.0)
    return Outcome(
        excess,
        excess,
        f"largest |estimate − exact| {err:.3g} = {z:.2f} standard errors "
        f"(exact KL {exact.min().item():.3g}..{exact.max().item():.3g})",
    )


VERIFICATION = Verification(
    technique="on-policy-distillation",
    compares="full-vocabulary reverse KL via F.kl_div(log p_t, log p_s, log_target=True) "
    "against a loop; "
    "the sampled estimator log p_s(x) - log p_t(x), x ~ p_s, against the exact value",
    shapes=(f"N{N}-V{V}", "40000 samples per position"),
    gradients=True,
    checks=(
        Check(
            "full-vocab-vs-loop",
            "The full-vocabulary reverse KL equals the per-token loop, with its gradient.",
            full_vocab_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "sampled-unbiased",
            "The sampled estimator's Monte Carlo mean lies within 4 standard errors "
            "of the exact reverse KL at every position.",
            sampled_is_unbiased,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
