"""Compressed KV entries, the obvious way: one window at a time, one token at a time."""

from __future__ import annotations

import torch

from kernels.csa_hca.config import Compressor, rms_norm, rotate_entries

__all__ = ["naive_compress"]


def naive_compress(h: torch.Tensor, comp: Compressor) -> torch.Tensor:
    """h [B, T, d] → entries [B, ⌊T/m⌋, d_c], window by window."""
    B, T, _ = h.shape
    entries = []
    for i in range(comp.entries(T)):
        logits, values = [], []
        for offset, j in enumerate(comp.window(i)):
            if j < 0:
                continue
            logits.append(h[:, j] @ comp.w_z.T + comp.bias[offset])
            values.append(h[:, j] @ comp.w_kv.T)
        weights = torch.stack(logits).softmax(dim=0)  # over the window's tokens, per channel
        pooled = (weights * torch.stack(values)).sum(0)
        entries.append(rms_norm(pooled, comp.norm))
    c = torch.stack(entries, dim=1)
    return rotate_entries(c, torch.arange(c.shape[1]) * comp.stride, comp)
