"""SpecForge, batched: the EAGLE-3 soft cross-entropy over all test-time-training steps
at once, and vectorised speculative sampling of many independent trials."""

from __future__ import annotations

import torch

__all__ = ["TTT_STEPS", "draft_loss", "speculative_sample"]

#: Test-time-training unroll length used for EAGLE-3 drafts.
TTT_STEPS = 7


def draft_loss(
    draft_logits: torch.Tensor, target_probs: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    logq = draft_logits.float().log_softmax(-1)
    per_pos = -(target_probs.float() * logq).sum(-1)  # [steps, B, T]
    m = mask.to(per_pos.dtype)
    return ((per_pos * m).sum((1, 2)) / m.sum((1, 2)).clamp(min=1)).mean()


def speculative_sample(
    p: torch.Tensor, q: torch.Tensor, trials: int, gen: torch.Generator
) -> torch.Tensor:
    """Emitted tokens of ``trials`` independent single-token speculative steps."""
    p64, q64 = p.double().cpu(), q.double().cpu()
    draft = torch.multinomial(q64, trials, replacement=True, generator=gen)
    accept = torch.rand(trials, generator=gen, dtype=torch.float64) < (
        p64[draft] / q64[draft]
    ).clamp(max=1)
    residual = (p64 - q64).clamp(min=0)
    fallback = torch.multinomial(residual / residual.sum(), trials, replacement=True, generator=gen)
    return torch.where(accept, draft, fallback)
