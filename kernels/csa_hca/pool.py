"""Compressed KV entries in one shot, and the same entries produced by a streaming cache.

``compress`` projects every token once, lays the windows out with ``unfold`` (the CSA
windows after padding m empty positions on the left, masked out of the softmax) and
pools all windows together. ``StreamingCompressor`` receives tokens one by one during
decoding, keeps only the last window's worth of projected tokens, and emits entry i
exactly when token (i+1)·m − 1 arrives.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from kernels.csa_hca.config import Compressor
from kernels.mla.config import apply_rope

__all__ = ["StreamingCompressor", "attend_compressed", "compress", "entries", "width", "window"]


def width(comp: Compressor) -> int:
    """Tokens in a window: 2m (CSA) or m′ (HCA)."""
    return 2 * comp.stride if comp.overlap else comp.stride


def entries(comp: Compressor, tokens: int) -> int:
    """Complete entries after ``tokens`` tokens: ⌊T/m⌋."""
    return tokens // comp.stride


def window(comp: Compressor, i: int) -> range:
    """Token positions of entry i (before clipping at 0)."""
    start = (i - 1) * comp.stride if comp.overlap else i * comp.stride
    return range(start, start + width(comp))


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate_entries(c: torch.Tensor, positions: torch.Tensor, comp: Compressor) -> torch.Tensor:
    """Rotate the last ``rope`` channels of entries c [..., n, d_c] at ``positions`` [n]."""
    if not comp.rope:
        return c
    head, tail = c[..., : -comp.rope], c[..., -comp.rope :]
    return torch.cat([head, apply_rope(tail, positions.to(c.device), comp.rope_base)], dim=-1)


def compress(h: torch.Tensor, comp: Compressor) -> torch.Tensor:
    """h [B, T, d] → entries [B, ⌊T/m⌋, d_c]."""
    B, T, _ = h.shape
    n = entries(comp, T)
    if n == 0:
        return h.new_zeros(B, 0, comp.w_kv.shape[0])
    used = n * comp.stride  # tokens after the last complete window wait for the next entry
    z = h[:, :used] @ comp.w_z.T
    kv = h[:, :used] @ comp.w_kv.T
    valid = torch.ones(B, used, 1, device=h.device, dtype=torch.bool)
    if comp.overlap:  # m empty positions in front of the first window
        z, kv = F.pad(z, (0, 0, comp.stride, 0)), F.pad(kv, (0, 0, comp.stride, 0))
        valid = F.pad(valid, (0, 0, comp.stride, 0), value=False)
    # [B, n, d_c, width] → [B, n, width, d_c]
    w = width(comp)
    zw = z.unfold(1, w, comp.stride).transpose(-1, -2)
    kvw = kv.unfold(1, w, comp.stride).transpose(-1, -2)
    ok = valid.unfold(1, w, comp.stride).transpose(-1, -2)
    logits = (zw + comp.bias).masked_fill(~ok, float("-inf"))
    pooled = (logits.softmax(dim=2) * kvw).sum(2)
    c = rms_norm(pooled, comp.norm)
    return rotate_entries(c, torch.arange(n) * comp.stride, comp)


class StreamingCompressor:
    """Decode-time compression: push one token's hidden state at a time."""

    def __init__(self, comp: Compressor) -> None:
        self.comp = comp
        self.z: list[torch.Tensor] = []
        self.kv: list[torch.Tensor] = []
        self.seen = 0
        self.entries: list[torch.Tensor] = []

    def push(self, h_t: torch.Tensor) -> torch.Tensor | None:
        """h_t [B, d]; returns the new entry [B, d_c] when this token completes a window."""
        comp = self.comp
        self.z.append(h_t @ comp.w_z.T)
        self.kv.append(h_t @ comp.w_kv.T)
        self.z, self.kv = self.z[-width(comp) :], self.kv[-width(comp) :]
        self.seen += 1
        if self.seen % comp.stride:
            return None
        i = self.seen // comp.stride - 1
        first = window(comp, i).start
        offsets = [j - first for j in range(max(first, 0), self.seen)]
        logits = torch.stack(self.z[-len(offsets) :]) + comp.bias[offsets][:, None]
        pooled = (logits.softmax(0) * torch.stack(self.kv[-len(offsets) :])).sum(0)
        entry = rms_norm(pooled, comp.norm)
        entry = rotate_entries(entry[:, None], torch.tensor([i * comp.stride]), comp)[:, 0]
        self.entries.append(entry)
        return entry


def attend_compressed(
    q: torch.Tensor,
    c: torch.Tensor,
    comp: Compressor,
    scores: torch.Tensor | None = None,
    topk: int | None = None,
) -> torch.Tensor:
    """Each query t [B, T, d_c] attends over the entries already complete at t (entry i
    needs token (i+1)·m − 1), optionally only the top-k of them by indexer ``scores``
    [B, T, n] (CSA's sparse selection). Entries serve as keys and values."""
    T, n = q.shape[1], c.shape[1]
    ready = (torch.arange(n, device=q.device)[None, :] + 1) * comp.stride - 1 <= torch.arange(
        T, device=q.device
    )[:, None]
    logits = torch.einsum("btd,bnd->btn", q, c) * c.shape[-1] ** -0.5
    mask = ready.expand_as(logits)
    if topk is not None and scores is not None:
        s = scores.masked_fill(~mask, float("-inf"))
        order = torch.sort(s, dim=-1, descending=True, stable=True).indices[..., :topk]
        mask = mask & torch.zeros_like(mask).scatter(-1, order, True)
    logits = logits.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(logits.softmax(-1))  # queries before the first entry see nothing
    return weights @ c
