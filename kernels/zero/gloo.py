"""ZeRO-3 against DDP over real processes with torch.distributed (gloo): all-gather the
parameters, reduce-scatter the gradients, update the owned slice; DDP all-reduces and
updates everything. Each rank returns its largest difference after the steps."""

from __future__ import annotations

import torch
import torch.distributed as dist

from kernels.distributed import all_gather, reduce_scatter
from kernels.zero.model import MLPShape, adam_update, local_grad, microbatches

__all__ = ["zero_rank"]


def zero_rank(rank: int, world: int, seed: int, steps: int) -> dict[str, float]:
    shape = MLPShape()
    gen = torch.Generator().manual_seed(seed)
    start = torch.randn(shape.numel, generator=gen) * 0.3
    batches = microbatches(world, steps, shape, gen)
    # DDP
    params16 = start.to(torch.bfloat16)
    master, m, v = start.clone(), torch.zeros_like(start), torch.zeros_like(start)
    # ZeRO-3: this rank's slice only
    own16 = start.chunk(world)[rank].to(torch.bfloat16)
    z_master = start.chunk(world)[rank].clone()
    z_m, z_v = torch.zeros_like(z_master), torch.zeros_like(z_master)
    for step in range(1, steps + 1):
        x, y = batches[step - 1][rank]
        g = local_grad(params16, shape, x, y).to(torch.bfloat16).float()
        dist.all_reduce(g)
        adam_update(master, m, v, g / world, step)
        params16 = master.to(torch.bfloat16)

        full16 = all_gather(own16, world)
        zg = reduce_scatter(local_grad(full16, shape, x, y).to(torch.bfloat16).float(), world)
        adam_update(z_master, z_m, z_v, zg / world, step)
        own16 = z_master.to(torch.bfloat16)
    gathered = all_gather(z_master, world)
    return {
        "master": (gathered - master).abs().max().item(),
        "params16": (all_gather(own16, world).float() - params16.float()).abs().max().item(),
        "scale": master.abs().max().item(),
    }
