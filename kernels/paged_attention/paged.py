"""PagedAttention: the KV cache in fixed-size blocks of a shared pool, one block table
per sequence, as an operating system pages memory.

A sequence of L tokens owns ⌈L/bs⌉ blocks, allocated one at a time as it grows, so no
sequence wastes a whole block: the unused slots are those after its last token in its
last block (< bs). Logical token j of a sequence lives in physical block
``table[j // bs]`` at slot ``j % bs``; attention gathers through the table, so which
physical blocks a sequence got does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

__all__ = ["BlockPool", "paged_decode"]


@dataclass
class BlockPool:
    """A pool of ``num_blocks`` KV blocks of ``block_size`` slots, handed out on demand."""

    num_blocks: int
    block_size: int
    heads: int
    head_dim: int
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    dtype: torch.dtype = torch.float32
    #: Physical block ids in the order they will be handed out.
    order: list[int] | None = None

    def __post_init__(self) -> None:
        shape = (self.num_blocks, self.block_size, self.heads, self.head_dim)
        self.k = torch.zeros(shape, device=self.device, dtype=self.dtype)
        self.v = torch.zeros(shape, device=self.device, dtype=self.dtype)
        self.free = list(self.order) if self.order is not None else list(range(self.num_blocks))
        self.tables: list[list[int]] = []
        self.lengths: list[int] = []

    def add_sequence(self) -> int:
        self.tables.append([])
        self.lengths.append(0)
        return len(self.tables) - 1

    def append(self, seq: int, k: torch.Tensor, v: torch.Tensor) -> None:
        """Store one token's k, v ([H, D]) at the end of sequence ``seq``."""
        j = self.lengths[seq]
        if j % self.block_size == 0:
            if not self.free:
                raise MemoryError(f"the pool of {self.num_blocks} blocks is exhausted")
            self.tables[seq].append(self.free.pop(0))
        block, slot = self.tables[seq][j // self.block_size], j % self.block_size
        self.k[block, slot] = k
        self.v[block, slot] = v
        self.lengths[seq] = j + 1

    def wasted_slots(self, seq: int) -> int:
        return len(self.tables[seq]) * self.block_size - self.lengths[seq]

    def block_table(self) -> torch.Tensor:
        """[N, max_blocks] padded with -1."""
        width = max(len(t) for t in self.tables)
        rows = [t + [-1] * (width - len(t)) for t in self.tables]
        return torch.tensor(rows, dtype=torch.long, device=self.device)


def paged_decode(q: torch.Tensor, pool: BlockPool) -> torch.Tensor:
    """One decode step for every sequence: q [N, H, D] → [N, H, D], gathering keys and
    values through the block tables in a single batched pass (padded, masked)."""
    N, H, D = q.shape
    table = pool.block_table()  # [N, nb]
    lengths = torch.tensor(pool.lengths, device=q.device)
    nb, bs = table.shape[1], pool.block_size
    j = torch.arange(nb * bs, device=q.device)  # logical positions
    blocks = table[:, j // bs].clamp(min=0)  # [N, nb·bs]
    slots = (j % bs).expand(N, -1)
    k = pool.k[blocks, slots].float()  # [N, nb·bs, H, D]
    v = pool.v[blocks, slots].float()
    scores = torch.einsum("nhd,njhd->nhj", q.float(), k) * D**-0.5
    scores = scores.masked_fill((j[None, :] >= lengths[:, None])[:, None, :], float("-inf"))
    return torch.einsum("nhj,njhd->nhd", scores.softmax(-1), v)
