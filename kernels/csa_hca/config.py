"""DeepSeek-V4's compressed KV entries: parameters shared by every form.

A compressed entry summarises a window of tokens with a gated pooling:

    C_i = RMSNorm( Σ_{j ∈ window i} softmax_j(Z_j + B_{pos(j)}) ⊙ (W^{KV} h)_j )

where Z = W^Z h are per-channel gate logits, B a learned bias for each position inside
the window, and the softmax runs over the window's tokens, channel by channel. The last
``rope`` channels of C_i are then rotated at position i·m.

- HCA (heavily compressed): disjoint windows of m′ tokens; entry i covers [i·m′, (i+1)·m′).
- CSA (compressed sparse): windows of 2m tokens at stride m; entry i covers
  [(i−1)·m, (i+1)·m) clipped at 0, so windows overlap by m and the first one is half
  empty. Both give ⌊T/m⌋ entries for T tokens; entry i exists once its last token has
  been seen.

The compressor is data only: the pooling code lives in ``pool.py`` (the structured
forms) and, written again from the formula, in ``naive.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Compressor", "init_compressor"]


@dataclass(frozen=True)
class Compressor:
    w_kv: torch.Tensor  # [d_c, d]
    w_z: torch.Tensor  # [d_c, d]
    bias: torch.Tensor  # [width, d_c]: one row per position inside a window
    norm: torch.Tensor  # [d_c]
    stride: int  # m (CSA) or m′ (HCA)
    overlap: bool  # CSA: width 2m at stride m; HCA: width m′ at stride m′
    rope: int = 0
    rope_base: float = 10000.0



def init_compressor(
    d: int,
    d_c: int,
    stride: int,
    overlap: bool,
    gen: torch.Generator,
    *,
    rope: int = 0,
    device: torch.device | None = None,
    dtype: torch.dtype = torch.float32,
) -> Compressor:
    width = 2 * stride if overlap else stride

    def r(*shape: int, scale: float) -> torch.Tensor:
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(
            device=device, dtype=dtype
        )

    return Compressor(
        r(d_c, d, scale=d**-0.5),
        r(d_c, d, scale=d**-0.5),
        r(width, d_c, scale=0.5),
        1 + r(d_c, scale=0.1),
        stride,
        overlap,
        rope,
    )
