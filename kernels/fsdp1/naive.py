"""The unsharded reference: one replica trains on every microbatch, with the gradient
averaged over them (what data parallelism must reproduce), updated by Kingma & Ba's
Adam from :mod:`kernels.formulas` (not the sharded forms' own step)."""

from __future__ import annotations

import torch

from kernels.formulas import adam
from kernels.fsdp1.model import loss

__all__ = ["replicated_train"]


def replicated_train(start: list[torch.Tensor], batches: list[list[torch.Tensor]]) -> list[torch.Tensor]:
    params = [p.clone() for p in start]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    for step, per_rank in enumerate(batches, start=1):
        leaves = [p.clone().requires_grad_() for p in params]
        grads = [torch.zeros_like(p) for p in params]
        for x in per_rank:
            for acc, g in zip(grads, torch.autograd.grad(loss(leaves, x), leaves), strict=True):
                acc += g
        for i, (p, (m, v), g) in enumerate(zip(params, moments, grads, strict=True)):
            params[i], m, v = adam(p, m, v, g / len(per_rank), step)
            moments[i] = (m, v)
    return params
