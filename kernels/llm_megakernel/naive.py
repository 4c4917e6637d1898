"""The tiny decoder run layer by layer, one operator after another (on a GPU: one kernel
launch per operator), with RMSNorm and SiLU from the pinned formulas rather than the task
list's own code."""

from __future__ import annotations

import torch

from kernels.formulas import rms_norm, silu
from kernels.llm_megakernel.model import Config

__all__ = ["layerwise_forward"]


def _attention(x: torch.Tensor, w: dict[str, torch.Tensor], li: int, cfg: Config) -> torch.Tensor:
    T = x.shape[0]
    d = cfg.dim // cfg.heads
    q, k, v = ((x @ w[f"{li}.{n}"].T).view(T, cfg.heads, d).transpose(0, 1) for n in ("wq", "wk", "wv"))
    scores: torch.Tensor = (q @ k.transpose(1, 2)) * d**-0.5
    causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    o = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
    return o.transpose(0, 1).reshape(T, cfg.dim) @ w[f"{li}.wo"].T


def layerwise_forward(tokens: torch.Tensor, w: dict[str, torch.Tensor], cfg: Config) -> torch.Tensor:
    x = w["embed"][tokens]
    for li in range(cfg.layers):
        x = x + _attention(rms_norm(x, w[f"{li}.norm1"]), w, li, cfg)
        n = rms_norm(x, w[f"{li}.norm2"])
        x = x + (silu(n @ w[f"{li}.w1"].T) * (n @ w[f"{li}.w3"].T)) @ w[f"{li}.w2"].T
    return rms_norm(x, w["final_norm"]) @ w["lm_head"].T
