"""The four Liger operations written the obvious way, in float32, differentiated by autograd.

- language-model head + cross-entropy over the full logits [BT, V];
- RMSNorm row by row, y = x / rms(x) · (offset + w) (offset 0 for Llama, 1 for Gemma);
- RoPE as a rotation of complex pairs (x_i + i·x_{i+d/2}) by e^{iθ} (the pinned formula);
- SwiGLU, silu(a) · b (the pinned SiLU).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from kernels.formulas import rotate_pairs, silu

__all__ = ["naive_lm_head_ce", "naive_rmsnorm", "naive_rope", "naive_swiglu"]


def naive_lm_head_ce(
    h: torch.Tensor, weight: torch.Tensor, target: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    """h [BT, H], weight [V, H], target [BT] → mean cross-entropy over non-ignored rows."""
    logits = h.float() @ weight.float().T
    return F.cross_entropy(logits, target, ignore_index=ignore_index)


def naive_rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, offset: float = 0.0) -> torch.Tensor:
    rows = []
    flat = x.float().reshape(-1, x.shape[-1])
    for row in flat:
        rows.append(row / torch.sqrt(row.pow(2).mean() + eps) * (offset + weight.float()))
    return torch.stack(rows).reshape(x.shape).to(x.dtype)


def naive_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """x [B, T, H, D]; positions [T]: the pinned RoPE of :mod:`kernels.formulas`."""
    return rotate_pairs(x, positions[:, None], base)


def naive_swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return silu(a.float()) * b.float()
