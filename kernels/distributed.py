"""Run a rank's code on N CPU processes joined by a torch.distributed gloo process group.

``run_gloo(fn, world_size, *args)`` spawns ``world_size`` processes, each calling
``fn(comm, *args)`` with a :class:`GlooComm` inside an initialised gloo group
(rendezvous through a file in a private temporary directory, so parallel runs never
meet), and returns the value each rank returned, in rank order. ``fn`` is the same
SPMD function that :func:`kernels.simulated.simulate` runs on threads; it must be a
module-level function. The mutants applied in this process (:mod:`kernels.mutation`)
are applied in every rank too, so the gloo run tests the code the caller sees.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.multiprocessing.spawn import ProcessContext, start_processes

from kg.errors import KernelError

__all__ = ["GlooComm", "all_gather", "reduce_scatter", "run_gloo"]


class GlooComm:
    """This process's rank in the default (gloo) process group, with the simulated
    ranks' collective interface and traffic count (:class:`kernels.simulated.Comm`)."""

    def __init__(self, rank: int, world: int) -> None:
        self.rank, self.world, self.sent = rank, world, 0

    def all_reduce(self, t: torch.Tensor) -> torch.Tensor:
        out = t.detach().clone().contiguous()
        dist.all_reduce(out)
        self.sent += 2 * t.numel()
        return out

    def reduce_scatter(self, t: torch.Tensor) -> torch.Tensor:
        self.sent += t.numel()
        return reduce_scatter(t.detach(), self.world)

    def all_gather(self, t: torch.Tensor) -> torch.Tensor:
        out = all_gather(t.detach(), self.world)
        self.sent += out.numel()
        return out


def _entry(
    rank: int,
    fn: Callable[..., Any],
    world_size: int,
    folder: str,
    args: tuple[Any, ...],
    mutants: tuple[Any, ...],
) -> None:
    from kernels.mutation import applied

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=world_size)
    try:
        with applied(mutants):
            result = fn(GlooComm(rank, world_size), *args)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    torch.save(result, Path(folder) / f"rank{rank}.pt")


def _start_method() -> str:
    """A fork server that has imported torch once, then forks the ranks: cheaper than
    spawning (every spawned rank imports torch again) and safe, unlike forking this
    process after its thread pools started."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return "spawn"
    multiprocessing.set_forkserver_preload(["torch", "torch.distributed", "kernels.distributed"])
    return "forkserver"


def run_gloo(fn: Callable[..., Any], world_size: int, *args: Any, timeout: float = 120.0) -> list[Any]:
    """``[fn(comm_0, *args), ..., fn(comm_{N-1}, *args)]`` computed by N gloo processes."""
    from kernels.mutation import active

    if not dist.is_available() or not dist.is_gloo_available():
        raise KernelError(
            "this torch build has no gloo backend",
            hint="Install a torch build with distributed support.",
        )
    with tempfile.TemporaryDirectory(prefix="kg-gloo-") as folder:
        env = {"OMP_NUM_THREADS": "1"}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            context: ProcessContext | None = start_processes(  # type: ignore[no-untyped-call]
                _entry,
                args=(fn, world_size, folder, args, active()),
                nprocs=world_size,
                join=False,
                start_method=_start_method(),
            )
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        deadline = time.monotonic() + timeout
        assert context is not None
        while not context.join(timeout=0.5):
            if time.monotonic() > deadline:
                for p in context.processes:
                    if p.is_alive():
                        p.terminate()
                raise KernelError(
                    f"the gloo run did not finish within {timeout:.0f} s",
                    hint="Check that nothing else holds the CPU; the run was stopped.",
                )
        return [torch.load(Path(folder) / f"rank{r}.pt", weights_only=False) for r in range(world_size)]


def all_gather(shard: torch.Tensor, world_size: int) -> torch.Tensor:
    """Concatenate equal-size shards from every rank along dim 0."""
    out = torch.empty((world_size * shard.shape[0], *shard.shape[1:]), dtype=shard.dtype)
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    gather(out, shard.contiguous())
    return out


def reduce_scatter(full: torch.Tensor, world_size: int) -> torch.Tensor:
    """Sum ``full`` over ranks and keep this rank's slice of dim 0."""
    out = torch.empty((full.shape[0] // world_size, *full.shape[1:]), dtype=full.dtype)
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    scatter(out, full.contiguous())
    return out
