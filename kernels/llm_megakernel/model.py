"""A tiny Llama-style decoder (RMSNorm, causal multi-head attention, SwiGLU MLP) whose
weights both forms share."""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Config", "init_model", "rms_norm"]


@dataclass(frozen=True)
class Config:
    vocab: int = 50
    dim: int = 32
    heads: int = 4
    layers: int = 2
    hidden: int = 64
    tile: int = 16  # column tile of the MLP and LM-head tasks


def init_model(
    cfg: Config, gen: torch.Generator, device: torch.device, dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    def r(*shape: int, scale: float | None = None) -> torch.Tensor:
        s = shape[-1] ** -0.5 if scale is None else scale
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * s).to(device, dtype)

    w = {
        "embed": r(cfg.vocab, cfg.dim, scale=1.0),
        "final_norm": 1 + r(cfg.dim, scale=0.1),
        "lm_head": r(cfg.vocab, cfg.dim),
    }
    for li in range(cfg.layers):
        w |= {
            f"{li}.norm1": 1 + r(cfg.dim, scale=0.1),
            f"{li}.wq": r(cfg.dim, cfg.dim),
            f"{li}.wk": r(cfg.dim, cfg.dim),
            f"{li}.wv": r(cfg.dim, cfg.dim),
            f"{li}.wo": r(cfg.dim, cfg.dim),
            f"{li}.norm2": 1 + r(cfg.dim, scale=0.1),
            f"{li}.w1": r(cfg.hidden, cfg.dim),
            f"{li}.w3": r(cfg.hidden, cfg.dim),
            f"{li}.w2": r(cfg.dim, cfg.hidden),
        }
    return w


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight
