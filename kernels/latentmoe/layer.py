"""LatentMoE weights and the routing both forms share.

The router reads the full hidden state; the routed experts work in a latent space of
width ℓ < d: x → fc1_latent_proj (d → ℓ) → experts → Σ weighted → fc2_latent_proj
(ℓ → d); a shared expert works on the full hidden state. Tokens are dispatched to
experts as ℓ-wide latents, so the dispatch traffic scales with ℓ, not d.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernels.experts import Experts, init_experts

__all__ = ["LatentMoE", "init_latentmoe", "route"]


@dataclass(frozen=True)
class LatentMoE:
    router: torch.Tensor  # [E, d]
    down: torch.Tensor  # [ℓ, d]  fc1_latent_proj
    up: torch.Tensor  # [d, ℓ]  fc2_latent_proj
    experts: Experts  # routed experts in the latent space
    shared: Experts  # one shared expert on the full hidden state
    k: int

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return (self.router, self.down, self.up, *self.experts.tensors(), *self.shared.tensors())

    @classmethod
    def from_tensors(cls, k: int, *t: torch.Tensor) -> LatentMoE:
        return cls(t[0], t[1], t[2], Experts(*t[3:6]), Experts(*t[6:9]), k)


def init_latentmoe(
    d: int,
    latent: int,
    experts: int,
    k: int,
    gen: torch.Generator,
    device: torch.device,
    dtype: torch.dtype,
) -> LatentMoE:
    def r(*shape: int) -> torch.Tensor:
        x: torch.Tensor = torch.randn(*shape, generator=gen, dtype=torch.float64) * shape[-1] ** -0.5
        return x.to(device, dtype)

    return LatentMoE(
        r(experts, d),
        r(latent, d),
        r(d, latent),
        init_experts(experts, latent, 2 * latent, gen, device, dtype),
        init_experts(1, d, 2 * d, gen, device, dtype),
        k,
    )


def route(x: torch.Tensor, layer: LatentMoE) -> tuple[torch.Tensor, torch.Tensor]:
    """Sigmoid scores of the full hidden state, top-k, weights renormalised to sum to 1."""
    scores = torch.sigmoid(x @ layer.router.T)
    top = torch.sort(scores, dim=-1, descending=True, stable=True)
    chosen = top.indices[:, : layer.k]
    weights = top.values[:, : layer.k]
    return chosen, weights / weights.sum(-1, keepdim=True)
