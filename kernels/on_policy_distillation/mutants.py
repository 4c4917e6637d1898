"""Bugs a person makes in the reverse-KL losses of on-policy distillation."""

from __future__ import annotations

from kernels.mutation import Mutant

_KL = "kernels.on_policy_distillation.kl"

MUTANTS = (
    Mutant(
        "kl-div-arguments-swapped",
        "F.kl_div gets (student, teacher), which is the forward KL(p_t ‖ p_s)",
        f"{_KL}:reverse_kl",
        "F.kl_div(lt, ls, log_target=True",
        "F.kl_div(ls, lt, log_target=True",
        "full-vocab-vs-loop",
    ),
    Mutant(
        "log-softmax-over-positions",
        "the student's log-softmax is taken over positions instead of the vocabulary",
        f"{_KL}:reverse_kl",
        "ls = student_logits.float().log_softmax(-1)",
        "ls = student_logits.float().log_softmax(0)",
        "full-vocab-vs-loop",
    ),
    Mutant(
        "sampled-from-teacher",
        "the tokens are drawn from the teacher, so the estimator is biased for the reverse KL",
        f"{_KL}:sampled_reverse_kl",
        "torch.multinomial(ls.exp().cpu()",
        "torch.multinomial(lt.exp().cpu()",
        "sampled-unbiased",
    ),
    Mutant(
        "sampled-sign",
        "the sampled estimator is log p_t(x) − log p_s(x)",
        f"{_KL}:sampled_reverse_kl",
        "per_draw = ls.gather(1, draws) - lt.gather(1, draws)",
        "per_draw = lt.gather(1, draws) - ls.gather(1, draws)",
        "sampled-unbiased",
    ),
    Mutant(
        "sampler-ignores-generator",
        "the draws come from torch's global stream, not the generator the caller passes",
        f"{_KL}:sampled_reverse_kl",
        "samples, replacement=True, generator=gen)",
        "samples, replacement=True)",
        "sampler-threads-generator",
        kind="statistics",
    ),
    Mutant(
        "sampler-fixed-seed",
        "the draws come from a generator seeded with 0 inside the function, whatever the caller passes",
        f"{_KL}:sampled_reverse_kl",
        "samples, replacement=True, generator=gen)",
        "samples, replacement=True, generator=torch.Generator().manual_seed(0))",
        "sampler-threads-generator",
        kind="statistics",
    ),
    Mutant(
        "stderr-times-root-n",
        "the standard error is σ·√n instead of σ/√n, so any z-test on it passes",
        f"{_KL}:sampled_reverse_kl",
        "per_draw.std(-1) / samples**0.5",
        "per_draw.std(-1) * samples**0.5",
        "standard-error",
        kind="statistics",
    ),
    Mutant(
        "stderr-over-n",
        "the standard error divides σ by n instead of √n",
        f"{_KL}:sampled_reverse_kl",
        "per_draw.std(-1) / samples**0.5",
        "per_draw.std(-1) / samples",
        "standard-error",
        kind="statistics",
    ),
)
