"""Reverse KL for on-policy distillation, three ways.

- ``reverse_kl``: the full-vocabulary sum through ``F.kl_div(log p_t, log p_s,
  log_target=True)``, which computes Σ p_s (log p_s − log p_t) = KL(p_s ‖ p_t);
- ``sampled_reverse_kl``: the estimator the method trains with, log p_s(x) − log p_t(x)
  at tokens x the student itself sampled. Its expectation under x ~ p_s is the reverse
  KL, so it is unbiased; it needs the teacher's log-probability of one token only.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["reverse_kl", "sampled_reverse_kl"]


def reverse_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    ls = student_logits.float().log_softmax(-1)
    lt = teacher_logits.float().log_softmax(-1)
    return F.kl_div(lt, ls, log_target=True, reduction="none").sum(-1)


def sampled_reverse_kl(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, samples: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per position: (mean of log p_s(x) − log p_t(x) over ``samples`` draws x ~ p_s,
    its standard error)."""
    ls = student_logits.float().log_softmax(-1)
    lt = teacher_logits.float().log_softmax(-1)
    draws = torch.multinomial(ls.exp().cpu(), samples, replacement=True, generator=gen).to(
        ls.device
    )
    per_draw = ls.gather(1, draws) - lt.gather(1, draws)
    return per_draw.mean(-1), per_draw.std(-1) / samples**0.5
