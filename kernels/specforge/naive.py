"""SpecForge's two sides, written the obvious way.

- EAGLE-3 draft training: at each of the test-time-training steps the draft predicts a
  distribution and is scored by soft cross-entropy against the target model's
  distribution p, masked to real positions: −Σ mask · Σ_x p(x) log q(x) / Σ mask,
  averaged over steps.
- Speculative sampling, one draft token: draw x ~ q; accept with probability
  min(1, p(x)/q(x)); on rejection draw from the residual max(0, p − q), normalised.
  ``output_law`` computes the distribution of the emitted token by enumeration.
"""

from __future__ import annotations

import torch

__all__ = ["naive_draft_loss", "output_law"]


def naive_draft_loss(draft_logits: torch.Tensor, target_probs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """draft_logits, target_probs: [steps, B, T, V]; mask: [steps, B, T]."""
    per_step = []
    for k in range(draft_logits.shape[0]):
        total = draft_logits.new_zeros(())
        count = 0
        for b in range(draft_logits.shape[1]):
            for t in range(draft_logits.shape[2]):
                if mask[k, b, t]:
                    logq = draft_logits[k, b, t].float().log_softmax(-1)
                    total = total - (target_probs[k, b, t].float() * logq).sum()
                    count += 1
        per_step.append(total / max(count, 1))
    return torch.stack(per_step).mean()


def output_law(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """P(emit y) = q(y)·min(1, p(y)/q(y)) + P(reject)·residual(y), token by token."""
    V = p.shape[0]
    reject = sum(q[x] * (1 - min(1.0, float(p[x] / q[x]))) for x in range(V))
    residual = torch.clamp(p - q, min=0)
    residual = residual / residual.sum() if residual.sum() > 0 else residual
    law = []
    for y in range(V):
        law.append(q[y] * min(1.0, float(p[y] / q[y])) + reject * residual[y])
    return torch.stack([torch.as_tensor(v, dtype=p.dtype) for v in law])
