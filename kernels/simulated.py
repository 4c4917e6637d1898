"""Collectives over simulated ranks, in one process, deterministically.

Two ways of writing the ranks' code:

- ``Ranks``: all ranks at once, each rank's tensor an item of a list (FSDP1, FSDP2);
- ``simulate(world, fn, *args)``: SPMD, the way the code runs on a real cluster. Each
  rank is a thread that calls ``fn(comm, *args)`` with a :class:`Comm` of its own, and
  the collectives meet at a barrier. The same ``fn`` runs unchanged over gloo processes
  (:func:`kernels.distributed.run_gloo`), so a gloo check tests the code the simulated
  checks test, not a copy of it.

Sums always run in rank order, and every collective counts the elements each rank
sends, with the usual ring costs: an all-reduce of n elements costs 2n (a
reduce-scatter and an all-gather), a reduce-scatter or an all-gather of a full size n
costs n.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

__all__ = ["Comm", "Ranks", "ThreadComm", "simulate"]

#: Seconds a rank waits at a collective for the others before the simulation gives up.
TIMEOUT = 60.0


def _sum(parts: list[torch.Tensor]) -> torch.Tensor:
    total = parts[0]
    for t in parts[1:]:
        total = total + t
    return total


@dataclass
class Ranks:
    world: int
    sent: int = 0  # elements communicated per rank so far

    def all_reduce(self, per_rank: list[torch.Tensor]) -> list[torch.Tensor]:
        total = _sum(per_rank)
        self.sent += 2 * total.numel()
        return [total.clone() for _ in range(self.world)]

    def reduce_scatter(self, per_rank: list[torch.Tensor]) -> list[torch.Tensor]:
        """Sum full tensors (dim 0 divisible by the world) and give rank r the r-th slice."""
        total = _sum(per_rank)
        self.sent += total.numel()
        return [c.clone() for c in total.chunk(self.world)]

    def all_gather(self, shards: list[torch.Tensor]) -> list[torch.Tensor]:
        full = torch.cat(shards)
        self.sent += full.numel()
        return [full.clone() for _ in range(self.world)]


class Comm(Protocol):
    """One rank's view of its process group."""

    rank: int
    world: int
    #: Elements this rank has sent so far.
    sent: int

    def all_reduce(self, t: torch.Tensor) -> torch.Tensor:
        """The sum of every rank's ``t``."""
        ...

    def reduce_scatter(self, t: torch.Tensor) -> torch.Tensor:
        """The sum over ranks, and this rank's slice of it along dim 0."""
        ...

    def all_gather(self, t: torch.Tensor) -> torch.Tensor:
        """Every rank's ``t``, concatenated along dim 0 in rank order."""
        ...


@dataclass
class _Group:
    world: int
    slots: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.slots = [None] * self.world
        self.barrier = threading.Barrier(self.world, timeout=TIMEOUT)

    def exchange(self, rank: int, t: torch.Tensor) -> list[torch.Tensor]:
        """Every rank's tensor, in rank order; the second barrier keeps a fast rank from
        overwriting its slot before the others have read it."""
        self.slots[rank] = t
        self.barrier.wait()
        parts = list(self.slots)
        self.barrier.wait()
        return parts


@dataclass
class ThreadComm:
    """A simulated rank: collectives with the other threads of its group."""

    rank: int
    world: int
    group: _Group
    sent: int = 0

    def all_reduce(self, t: torch.Tensor) -> torch.Tensor:
        total = _sum(self.group.exchange(self.rank, t))
        self.sent += 2 * t.numel()
        return total

    def reduce_scatter(self, t: torch.Tensor) -> torch.Tensor:
        total = _sum(self.group.exchange(self.rank, t))
        self.sent += t.numel()
        return total.chunk(self.world)[self.rank].clone()

    def all_gather(self, t: torch.Tensor) -> torch.Tensor:
        full = torch.cat(self.group.exchange(self.rank, t))
        self.sent += full.numel()
        return full


def simulate(world: int, fn: Callable[..., Any], *args: Any) -> list[Any]:
    """``[fn(comm_0, *args), ..., fn(comm_{N-1}, *args)]``, each rank in its own thread.

    If a rank raises, the others are released from the barrier they wait at and the
    first error is raised here."""
    group = _Group(world)
    results: list[Any] = [None] * world
    errors: list[BaseException] = []

    def run(rank: int) -> None:
        try:
            results[rank] = fn(ThreadComm(rank, world, group), *args)
        except threading.BrokenBarrierError:
            pass  # another rank failed first
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)
            group.barrier.abort()

    threads = [threading.Thread(target=run, args=(r,), name=f"rank {r}") for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    if group.barrier.broken:
        raise RuntimeError(
            f"simulated ranks waited {TIMEOUT:.0f} s at a collective that not every rank reached; "
            "collectives inside a backward pass cannot run on CUDA here (its autograd runs every rank's backward "
            "on one thread per device): run such ranks with CPU tensors")
    return results
