"""Multi-head latent attention: dimensions, weights and the decoupled RoPE both forms share."""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["DEEPSEEK_V2", "MLAConfig", "apply_rope", "init_weights", "rms_norm"]


@dataclass(frozen=True)
class MLAConfig:
    heads: int
    kv_rank: int  # width of the compressed latent c_kv
    nope: int  # per-head query/key width without position
    rope: int  # width of the decoupled RoPE part, shared by all heads on the key side
    v_dim: int  # per-head value width
    dim: int = 0  # model width (only the weights need it)
    rope_base: float = 10000.0


#: The attention dimensions of DeepSeek-V2 (128 heads; latent 512 + RoPE 64; heads 128 + 64).
DEEPSEEK_V2 = MLAConfig(heads=128, kv_rank=512, nope=128, rope=64, v_dim=128)


def init_weights(
    cfg: MLAConfig, gen: torch.Generator, device: torch.device, dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    def w(rows: int, cols: int) -> torch.Tensor:
        x: torch.Tensor = torch.randn(rows, cols, generator=gen, dtype=torch.float64) * cols**-0.5
        return x.to(device=device, dtype=dtype)

    H = cfg.heads
    return {
        "wq": w(H * (cfg.nope + cfg.rope), cfg.dim),
        "wkv_a": w(cfg.kv_rank + cfg.rope, cfg.dim),
        "kv_norm": (1 + 0.1 * torch.randn(cfg.kv_rank, generator=gen, dtype=torch.float64)).to(
            device, dtype
        ),
        "wkv_b": w(H * (cfg.nope + cfg.v_dim), cfg.kv_rank),
        "wo": w(cfg.dim, H * cfg.v_dim),
    }


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def apply_rope(x: torch.Tensor, pos: torch.Tensor, base: float) -> torch.Tensor:
    """Rotate pairs (x_i, x_{i+r/2}) by pos·base^{−2i/r}; x [..., r], pos broadcast to x[..., 0]."""
    r = x.shape[-1]
    inv = base ** (-torch.arange(0, r, 2, device=x.device, dtype=torch.float64) / r)
    angle = (pos[..., None].double() * inv).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    x1, x2 = x[..., : r // 2], x[..., r // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
