"""Stable LatentMoE (Kimi K3): weights, configuration and routing.

    sigmoid router → top-k over score + bias → weights = renormalised unbiased scores
    routed_down (d → ℓ) → SiTU-GLU experts in ℓ → Σ weighted → RMSNorm → routed_up (ℓ → d)
    + two full-width shared experts

The RMSNorm after the sum fixes the scale of what reaches routed_up, whatever the
experts produce.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernels.experts import Experts, init_experts
from kernels.situ.fused import situ_and_mul

__all__ = ["K3", "StableConfig", "StableLatentMoE", "init_stable", "route", "situ_act"]


@dataclass(frozen=True)
class StableConfig:
    hidden: int
    latent: int
    experts: int
    k: int
    shared: int = 2


#: Kimi K3's routed-expert dimensions.
K3 = StableConfig(hidden=7168, latent=3584, experts=896, k=16, shared=2)


@dataclass(frozen=True)
class StableLatentMoE:
    router: torch.Tensor  # [E, d]
    bias: torch.Tensor  # [E] selection bias (no gradient)
    down: torch.Tensor  # [ℓ, d] routed_down
    norm: torch.Tensor  # [ℓ]
    up: torch.Tensor  # [d, ℓ] routed_up
    experts: Experts  # in ℓ
    shared: Experts  # full width
    k: int

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return (
            self.router,
            self.down,
            self.norm,
            self.up,
            *self.experts.tensors(),
            *self.shared.tensors(),
        )

    def with_tensors(self, *t: torch.Tensor) -> StableLatentMoE:
        return StableLatentMoE(
            t[0], self.bias, t[1], t[2], t[3], Experts(*t[4:7]), Experts(*t[7:10]), self.k
        )


def init_stable(
    cfg: StableConfig, gen: torch.Generator, device: torch.device, dtype: torch.dtype
) -> StableLatentMoE:
    def r(*shape: int, scale: float | None = None) -> torch.Tensor:
        s = shape[-1] ** -0.5 if scale is None else scale
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * s).to(device, dtype)

    return StableLatentMoE(
        r(cfg.experts, cfg.hidden),
        r(cfg.experts, scale=0.3),
        r(cfg.latent, cfg.hidden),
        1 + r(cfg.latent, scale=0.1),
        r(cfg.hidden, cfg.latent),
        init_experts(cfg.experts, cfg.latent, 2 * cfg.latent, gen, device, dtype),
        init_experts(cfg.shared, cfg.hidden, 2 * cfg.hidden, gen, device, dtype),
        cfg.k,
    )


def situ_act(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return situ_and_mul(torch.cat([gate, up], dim=-1))


def route(x: torch.Tensor, layer: StableLatentMoE) -> tuple[torch.Tensor, torch.Tensor]:
    scores = torch.sigmoid(x @ layer.router.T)
    chosen = torch.sort(scores + layer.bias, dim=-1, descending=True, stable=True).indices[
        :, : layer.k
    ]
    picked = scores.gather(1, chosen)
    return chosen, picked / picked.sum(-1, keepdim=True)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight
