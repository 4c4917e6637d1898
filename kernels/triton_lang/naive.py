"""The two operations of the Triton kernels, written the obvious way in torch loops:
a numerically safe softmax of each row, and a matrix product one output tile at a time."""

from __future__ import annotations

import torch

__all__ = ["naive_matmul", "naive_softmax"]


def naive_softmax(x: torch.Tensor) -> torch.Tensor:
    rows = []
    for row in x.float():
        e = (row - row.max()).exp()
        rows.append(e / e.sum())
    return torch.stack(rows)


def naive_matmul(a: torch.Tensor, b: torch.Tensor, tile: int = 16) -> torch.Tensor:
    M, N = a.shape[0], b.shape[1]
    out = torch.zeros(M, N, dtype=torch.float32, device=a.device)
    for i in range(0, M, tile):
        for j in range(0, N, tile):
            out[i : i + tile, j : j + tile] = a[i : i + tile].float() @ b[:, j : j + tile].float()
    return out
