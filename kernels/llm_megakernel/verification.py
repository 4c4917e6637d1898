"""Declared verification of the megakernel execution model.

Compared: one interpreter loop over a pre-scheduled task list (per-head QKV and
attention, MLP and LM-head column tiles, dependency counters) against the layer-by-
layer forward: identical logits. Properties: every buffer a task reads comes from one of
its declared dependencies (found by running the tasks as their data allows, so a missing
dependency fails on a count, not on a KeyError in the interpreter); every task runs once,
after all of its dependencies; any order the counters allow gives the same logits; the
whole forward is one launch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kernels.checks import Verification, check
from kernels.families import FAR_FROM_UNIT, TINY
from kernels.llm_megakernel.model import Config, init_model
from kernels.llm_megakernel.naive import layerwise_forward
from kernels.llm_megakernel.schedule import Task, build_tasks, run
from kernels.measures import Outcome, Setting, compare, compare_all, count, worst

CFG = Config()
T = 23


class _CountOps(TorchDispatchMode):  # type: ignore[no-untyped-call]
    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.ops = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops += 1
        return func(*args, **(kwargs or {}))


def _setup(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    return init_model(CFG, gen, s.device, s.dtype), s.randint(CFG.vocab, T, gen=gen)


class _NotYet(Exception):
    """A task asked for a buffer no task has written yet."""


class _Recording(dict[str, torch.Tensor]):
    """Buffers that remember what a task read and wrote."""

    def __init__(self, available: dict[str, torch.Tensor]) -> None:
        super().__init__(available)
        self.reads: set[str] = set()
        self.writes: set[str] = set()

    def __getitem__(self, key: str) -> torch.Tensor:
        if key not in self:
            raise _NotYet(key)
        self.reads.add(key)
        return super().__getitem__(key)

    def __setitem__(self, key: str, value: torch.Tensor) -> None:
        self.writes.add(key)
        super().__setitem__(key, value)


def _data_flow(tasks: list[Task]) -> tuple[dict[str, set[str]], dict[str, str], list[str]]:
    """Which buffers each task reads and which task writes each buffer, found by running
    the tasks in whatever order their data allows (not the order their declared
    dependencies give); and the tasks that never could run."""
    available: dict[str, torch.Tensor] = {}
    reads: dict[str, set[str]] = {}
    writer: dict[str, str] = {}
    pending = list(tasks)
    while pending:
        ran = []
        for task in pending:
            buffers = _Recording(available)
            try:
                task.fn(buffers)
            except _NotYet:
                continue
            reads[task.name] = buffers.reads
            for key in buffers.writes:
                writer[key] = task.name
                available[key] = dict.__getitem__(buffers, key)
            ran.append(task)
        if not ran:
            break
        pending = [t for t in pending if t not in ran]
    return reads, writer, [t.name for t in pending]


@check("dependency-counters", 0.0, measure="abs")
def dependencies_declared(s: Setting) -> Outcome:
    """Every buffer a task reads is written by a task among its declared (transitive)
    dependencies, found by running the tasks as their data allows; and the interpreter
    runs every task exactly once, after all of its dependencies, in four orders."""
    w, tokens = _setup(s, 1)
    tasks = build_tasks(tokens, w, CFG)
    reads, writer, stuck = _data_flow(tasks)
    declared = {t.name: set(t.deps) for t in tasks}

    def upstream(name: str) -> set[str]:
        seen: set[str] = set()
        todo = list(declared.get(name, ()))
        while todo:
            dep = todo.pop()
            if dep not in seen:
                seen.add(dep)
                todo += declared.get(dep, ())
        return seen

    missing = sorted(
        f"{name} reads {key} from {writer[key]}"
        for name, keys in reads.items()
        for key in keys
        if writer.get(key) != name and writer.get(key) not in upstream(name)
    )
    results = [
        count(len(missing), 0, f"{len(missing)} reads without a declared dependency: {missing[:3]}"),
        count(len(stuck), 0, f"{len(stuck)} tasks read buffers no task writes: {stuck[:3]}"),
    ]
    if not missing and not stuck:  # the counters can only be trusted with the graph
        for seed in (None, 1, 2, 3):
            _, order = run(tasks, order_seed=seed)
            position = {name: i for i, name in enumerate(order)}
            late = sum(position[dep] > position[t.name] for t in tasks for dep in t.deps)
            results.append(count(late + abs(len(order) - len(set(order))) + abs(len(order) - len(tasks)), 0))
    return worst(results, f"{len(tasks)} tasks: every read covered by a declared dependency; run once each, in order")


@check("interpreter-vs-layerwise", 1e-5, covers=(FAR_FROM_UNIT,))
def matches_layerwise(s: Setting) -> Outcome:
    """One interpreter loop over the task list gives the logits of the layer-by-layer
    forward, also with token embeddings of norm 1e-4 (where the norms' epsilon matters)."""
    w, tokens = _setup(s, 0)
    with _CountOps() as counter:
        ref = layerwise_forward(tokens, w, CFG)
    tasks = build_tasks(tokens, w, CFG)
    quiet = {**w, "embed": w["embed"] * TINY}
    results = [
        compare(ref, run(tasks)[0], "unit-scale embeddings"),
        compare(layerwise_forward(tokens, quiet, CFG), run(build_tasks(tokens, quiet, CFG))[0], "embeddings x1e-4"),
    ]
    return worst(
        results, f"{len(tasks)} tasks in 1 interpreter launch vs {counter.ops} operator launches layer by layer"
    )


@check("order-independence", 0.0, measure="abs")
def order_independent(s: Setting) -> Outcome:
    """Any order the dependency counters allow gives identical logits."""
    w, tokens = _setup(s, 2)
    tasks = build_tasks(tokens, w, CFG)
    base, first = run(tasks)
    runs = [run(tasks, order_seed=seed) for seed in (11, 12, 13)]
    differ = sum(order != first for _, order in runs)
    out = compare_all([(f"seed {i}", base, logits) for i, (logits, _) in enumerate(runs)])
    return Outcome(
        out.max_abs, out.max_rel, f"{differ} of 3 random orders differ from the FIFO order; logits identical"
    )


VERIFICATION = Verification(
    "llm-megakernel",
    __doc__ or "",
    (matches_layerwise, dependencies_declared, order_independent),
    shapes=(f"T{T}-vocab{CFG.vocab}-d{CFG.dim}-H{CFG.heads}-L{CFG.layers}-ffn{CFG.hidden}-tile{CFG.tile}",),
)
