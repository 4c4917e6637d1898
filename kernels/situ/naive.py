"""SiTU-GLU, the obvious way: the formula, elementwise, in float32, differentiated by autograd.

    SiTU(g, u) = β·tanh(g/β)·σ(g) · β_lin·tanh(u/β_lin),   β = 4, β_lin = 25

Both factors are bounded (|·| < β and < β_lin), so |SiTU| < β·β_lin = 100; as β and β_lin
grow it tends to SiLU(g)·u, the SwiGLU it replaces.
"""

from __future__ import annotations

import torch

__all__ = ["BETA", "BETA_LINEAR", "naive_situ"]

BETA = 4.0
BETA_LINEAR = 25.0


def naive_situ(
    gate: torch.Tensor, up: torch.Tensor, beta: float = BETA, beta_linear: float = BETA_LINEAR
) -> torch.Tensor:
    g, u = gate.float(), up.float()
    out = beta * torch.tanh(g / beta) * torch.sigmoid(g) * (beta_linear * torch.tanh(u / beta_linear))
    return out.to(gate.dtype)
