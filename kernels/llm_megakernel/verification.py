"""Declared verification of the megakernel execution model.

Compared: one interpreter loop over a pre-scheduled task list (per-head QKV and
attention, MLP and LM-head column tiles, dependency counters) against the layer-by-
layer forward: identical logits. Properties: every task runs once, after all of its
dependencies; any order the counters allow gives the same logits; the whole forward is
one launch.
"""

from __future__ import annotations

from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

from kernels.checks import Check, Outcome, Setting, Verification, compare, compare_all, count, worst
from kernels.llm_megakernel.model import Config, init_model
from kernels.llm_megakernel.naive import layerwise_forward
from kernels.llm_megakernel.schedule import build_tasks, run

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


def matches_layerwise(s: Setting) -> Outcome:
    w, tokens = _setup(s, 0)
    with _CountOps() as counter:
        ref = layerwise_forward(tokens, w, CFG)
    tasks = build_tasks(tokens, w, CFG)
    logits, _ = run(tasks)
    out = compare(ref, logits)
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"{len(tasks)} tasks in 1 interpreter launch vs {counter.ops} operator launches layer by layer",
    )


def dependencies_respected(s: Setting) -> Outcome:
    w, tokens = _setup(s, 1)
    tasks = build_tasks(tokens, w, CFG)
    results = []
    for seed in (None, 1, 2, 3):
        _, order = run(tasks, order_seed=seed)
        position = {name: i for i, name in enumerate(order)}
        late = sum(position[dep] > position[t.name] for t in tasks for dep in t.deps)
        results.append(
            count(
                late + abs(len(order) - len(set(order))) + abs(len(order) - len(tasks)),
                0,
                f"order seed {seed}",
            )
        )
    return worst(results, f"{len(tasks)} tasks, each run once after its dependencies, in 4 orders")


def order_independent(s: Setting) -> Outcome:
    w, tokens = _setup(s, 2)
    tasks = build_tasks(tokens, w, CFG)
    base, first = run(tasks)
    runs = [run(tasks, order_seed=seed) for seed in (11, 12, 13)]
    differ = sum(order != first for _, order in runs)
    out = compare_all([(f"seed {i}", base, logits) for i, (logits, _) in enumerate(runs)])
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"{differ} of 3 random orders differ from the FIFO order; logits identical",
    )


VERIFICATION = Verification(
    technique="llm-megakernel",
    compares="a pre-scheduled task list run by one interpreter loop with dependency counters "
    "against the "
    "layer-by-layer forward of a tiny decoder",
    shapes=(f"T{T}-vocab{CFG.vocab}-d{CFG.dim}-H{CFG.heads}-L{CFG.layers}-ffn{CFG.hidden}-tile{CFG.tile}",),
    checks=(
        Check(
            "interpreter-vs-layerwise",
            "One interpreter loop over the task list gives the logits of the layer-by-layer forward.",
            matches_layerwise,
            tolerance=1e-5,
        ),
        Check(
            "dependency-counters",
            "Every task runs exactly once, after all of its dependencies.",
            dependencies_respected,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "order-independence",
            "Any order the dependency counters allow gives identical logits.",
            order_independent,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
