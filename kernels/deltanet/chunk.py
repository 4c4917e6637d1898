"""DeltaNet in chunkwise (WY) form: Gated DeltaNet's chunk kernel with every gate open.

With α_t = 1 (g_t = 0) every decay factor in the chunk equations is 1 and the system
reduces to DeltaNet's UT transform: (I + diag(β) tril₋₁(K Kᵀ)) U = diag(β)(V − K h₀).
"""

from __future__ import annotations

import torch

from kernels.gated_deltanet.chunk import chunk_gated_delta_rule

__all__ = ["chunk_delta_rule"]


def chunk_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same arguments and results as ``naive_recurrent_delta_rule``."""
    g = torch.zeros_like(beta)
    return chunk_gated_delta_rule(
        q, k, v, g, beta, scale=scale, initial_state=initial_state, chunk_size=chunk_size
    )
