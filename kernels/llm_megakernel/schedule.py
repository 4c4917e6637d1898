"""The megakernel execution model: the whole forward pass as one pre-scheduled task list
run by a single interpreter loop.

``build_tasks`` cuts the forward into tasks (a norm, one head's QKV projection, one
head's attention, one column tile of the MLP or of the LM head, ...), each naming the
tasks it depends on. ``run`` is the "kernel": one call that keeps a dependency counter
per task, a queue of ready tasks, and runs tasks until none is left, decrementing the
counters of each finished task's dependents. Any order the counters allow gives the
same result; ``order_seed`` picks a random one to show it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from kernels.llm_megakernel.model import Config, rms_norm

__all__ = ["Task", "build_tasks", "run"]

Buffers = dict[str, torch.Tensor]


@dataclass
class Task:
    name: str
    deps: list[str]
    fn: Callable[[Buffers], None] = field(repr=False)


def build_tasks(tokens: torch.Tensor, w: dict[str, torch.Tensor], cfg: Config) -> list[Task]:
    T, D, H = tokens.shape[0], cfg.dim, cfg.heads
    d = D // H
    causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()
    tasks = [Task("embed", [], lambda b: b.__setitem__("x0", w["embed"][tokens]))]
    x = "x0"
    for li in range(cfg.layers):

        def norm1(b: Buffers, li: int = li, x: str = x) -> None:
            b[f"n1.{li}"] = rms_norm(b[x], w[f"{li}.norm1"])

        tasks.append(Task(f"norm1.{li}", ["embed" if li == 0 else f"down.{li - 1}"], norm1))
        for h in range(H):
            cols = slice(h * d, (h + 1) * d)

            def qkv(b: Buffers, li: int = li, h: int = h, cols: slice = cols) -> None:
                for n in ("q", "k", "v"):
                    b[f"{n}.{li}.{h}"] = b[f"n1.{li}"] @ w[f"{li}.w{n}"][cols].T

            def attend(b: Buffers, li: int = li, h: int = h) -> None:
                s = (b[f"q.{li}.{h}"] @ b[f"k.{li}.{h}"].T) * d**-0.5
                b[f"o.{li}.{h}"] = (
                    s.masked_fill(~causal, float("-inf")).softmax(-1) @ b[f"v.{li}.{h}"]
                )

            tasks.append(Task(f"qkv.{li}.{h}", [f"norm1.{li}"], qkv))
            tasks.append(Task(f"attn.{li}.{h}", [f"qkv.{li}.{h}"], attend))

        def out_proj(b: Buffers, li: int = li, x: str = x) -> None:
            o = torch.cat([b[f"o.{li}.{h}"] for h in range(H)], dim=-1)
            b[f"h.{li}"] = b[x] + o @ w[f"{li}.wo"].T

        tasks.append(Task(f"oproj.{li}", [f"attn.{li}.{h}" for h in range(H)], out_proj))

        def norm2(b: Buffers, li: int = li) -> None:
            b[f"n2.{li}"] = rms_norm(b[f"h.{li}"], w[f"{li}.norm2"])

        tasks.append(Task(f"norm2.{li}", [f"oproj.{li}"], norm2))
        tiles = range(0, cfg.hidden, cfg.tile)
        for j in tiles:

            def up(b: Buffers, li: int = li, j: int = j) -> None:
                n = b[f"n2.{li}"]
                rows = slice(j, j + cfg.tile)
                b[f"u.{li}.{j}"] = F.silu(n @ w[f"{li}.w1"][rows].T) * (n @ w[f"{li}.w3"][rows].T)

            tasks.append(Task(f"up.{li}.{j}", [f"norm2.{li}"], up))

        def down(b: Buffers, li: int = li, tiles: range = tiles) -> None:
            u = torch.cat([b[f"u.{li}.{j}"] for j in tiles], dim=-1)
            b[f"x{li + 1}"] = b[f"h.{li}"] + u @ w[f"{li}.w2"].T

        tasks.append(Task(f"down.{li}", [f"up.{li}.{j}" for j in tiles], down))
        x = f"x{li + 1}"

    def final(b: Buffers, x: str = x) -> None:
        b["nf"] = rms_norm(b[x], w["final_norm"])

    tasks.append(Task("final_norm", [f"down.{cfg.layers - 1}"], final))
    vocab_tiles = range(0, cfg.vocab, cfg.tile)
    for j in vocab_tiles:

        def head(b: Buffers, j: int = j) -> None:
            b[f"lm.{j}"] = b["nf"] @ w["lm_head"][j : j + cfg.tile].T

        tasks.append(Task(f"lm_head.{j}", ["final_norm"], head))
    tasks.append(
        Task(
            "logits",
            [f"lm_head.{j}" for j in vocab_tiles],
            lambda b: b.__setitem__("logits", torch.cat([b[f"lm.{j}"] for j in vocab_tiles], -1)),
        )
    )
    return tasks


def run(tasks: list[Task], order_seed: int | None = None) -> tuple[torch.Tensor, list[str]]:
    """Execute the task list in one interpreter loop; returns the logits and the order."""
    pending = {t.name: len(t.deps) for t in tasks}
    dependents: dict[str, list[str]] = {t.name: [] for t in tasks}
    for t in tasks:
        for dep in t.deps:
            dependents[dep].append(t.name)
    by_name = {t.name: t for t in tasks}
    ready = deque(name for name, n in pending.items() if n == 0)
    gen = torch.Generator().manual_seed(order_seed) if order_seed is not None else None
    buffers: Buffers = {}
    order: list[str] = []
    while ready:
        if gen is not None and len(ready) > 1:
            ready.rotate(-int(torch.randint(len(ready), (1,), generator=gen)))
        name = ready.popleft()
        by_name[name].fn(buffers)
        order.append(name)
        for nxt in dependents[name]:
            pending[nxt] -= 1
            if pending[nxt] == 0:
                ready.append(nxt)
    if len(order) != len(tasks):
        raise RuntimeError(
            f"{len(tasks) - len(order)} tasks never became ready: the task graph has a cycle"
        )
    return buffers["logits"], order
