"""Compressed KV entries, the obvious way: one window at a time, one token at a time,
written from the formula (the windows, RMSNorm and RoPE here are not the pooling code's):

    entry i = RMSNorm( Σ_{j ∈ window i} softmax_j(z_j + b_{j − first}) ⊙ kv_j ),
    window i = [(i − 1)·m, (i + 1)·m) clipped at 0 (CSA) or [i·m′, (i + 1)·m′) (HCA),

with the last ``rope`` channels of entry i turned by RoPE at position i·m.
"""

from __future__ import annotations

import torch

from kernels.csa_hca.config import Compressor
from kernels.formulas import rms_norm, rotate_pairs

__all__ = ["naive_compress"]


def naive_compress(h: torch.Tensor, comp: Compressor) -> torch.Tensor:
    """h [B, T, d] → entries [B, ⌊T/m⌋, d_c], window by window."""
    m, rope = comp.stride, comp.rope
    size = 2 * m if comp.overlap else m
    out = []
    for i in range(h.shape[1] // m):
        first = (i - 1) * m if comp.overlap else i * m
        logits, values = [], []
        for offset in range(size):
            if first + offset >= 0:
                logits.append(h[:, first + offset] @ comp.w_z.T + comp.bias[offset])
                values.append(h[:, first + offset] @ comp.w_kv.T)
        weights = torch.stack(logits).softmax(dim=0)  # over the window's tokens, per channel
        entry = rms_norm((weights * torch.stack(values)).sum(0), comp.norm)
        if rope:
            turned = rotate_pairs(entry[:, -rope:], torch.tensor(float(i * m)), comp.rope_base)
            entry = torch.cat([entry[:, :-rope], turned], dim=-1)
        out.append(entry)
    return torch.stack(out, dim=1)
