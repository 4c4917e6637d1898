"""On-policy distillation's per-token reverse KL, the obvious way: for every position,
sum over the whole vocabulary, KL(p_s ‖ p_t) = Σ_x p_s(x)·(log p_s(x) − log p_t(x))."""

from __future__ import annotations

import torch

__all__ = ["naive_reverse_kl"]


def naive_reverse_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """[N, V] logits → [N] per-position reverse KL."""
    out = []
    for s_row, t_row in zip(student_logits.float(), teacher_logits.float(), strict=True):
        ls, lt = s_row.log_softmax(-1), t_row.log_softmax(-1)
        total = s_row.new_zeros(())
        for x in range(s_row.shape[0]):
            total = total + ls[x].exp() * (ls[x] - lt[x])
        out.append(total)
    return torch.stack(out)
