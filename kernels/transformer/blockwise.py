"""Blockwise attention with an online softmax (the FlashAttention forward, in torch).

Keys are visited in blocks; each query block keeps a running maximum m, a running sum
l of e^{s − m} and an unnormalised output, rescaled by e^{m_old − m_new} whenever the
maximum grows. The full T×S score matrix never exists: at most one block of scores
per query block is alive at a time. Blocks need not divide T or S.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["blockwise_attention", "decode"]


def blockwise_attention(
    q: Tensor, k: Tensor, v: Tensor, *, causal: bool = True, scale: float | None = None, block_q: int = 32,
    block_k: int = 32,
) -> Tensor:
    """Same arguments and result as ``naive_attention``."""
    out_dtype = v.dtype
    q, k, v = (x.float().transpose(1, 2) for x in (q, k, v))  # [B, H, T|S, D]
    T, S, D = q.shape[2], k.shape[2], q.shape[3]
    scale = D**-0.5 if scale is None else scale
    offset = S - T
    blocks = []
    for i0 in range(0, T, block_q):
        qi = q[:, :, i0 : i0 + block_q] * scale
        rows = torch.arange(i0, i0 + qi.shape[2], device=q.device)
        m = qi.new_full(qi.shape[:3], float("-inf"))
        denom = qi.new_zeros(qi.shape[:3])
        acc = qi.new_zeros(*qi.shape[:3], v.shape[-1])
        stop = min(S, i0 + qi.shape[2] + offset) if causal else S
        for j0 in range(0, stop, block_k):
            s = qi @ k[:, :, j0 : j0 + block_k].transpose(-1, -2)
            if causal:
                cols = torch.arange(j0, j0 + s.shape[-1], device=q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None] + offset, float("-inf"))
            m_new = torch.maximum(m, s.max(dim=-1).values)
            safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            p = (s - safe[..., None]).exp()
            rescale = (m - safe).exp()
            denom = denom * rescale + p.sum(dim=-1)
            acc = acc * rescale[..., None] + p @ v[:, :, j0 : j0 + block_k]
            m = m_new
        blocks.append(acc / denom[..., None])
    return torch.cat(blocks, dim=2).transpose(1, 2).to(out_dtype)


def decode(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, block_k: int = 32
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Token-by-token decoding with a growing KV cache: step t appends k_t, v_t and
    attends from q_t over the cache. Returns the outputs [B, T, H, D] and the cache."""
    keys: list[torch.Tensor] = []
    values: list[torch.Tensor] = []
    outputs = []
    for t in range(q.shape[1]):
        keys.append(k[:, t : t + 1])
        values.append(v[:, t : t + 1])
        outputs.append(
            blockwise_attention(
                q[:, t : t + 1],
                torch.cat(keys, 1),
                torch.cat(values, 1),
                causal=True,
                block_k=block_k,
            )
        )
    return torch.cat(outputs, 1), {"k": torch.cat(keys, 1), "v": torch.cat(values, 1)}
