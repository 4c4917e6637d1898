"""Bugs a person makes in an environment's persistent state, snapshots and phases."""

from __future__ import annotations

from kernels.mutation import Mutant

_ENV = "kernels.agentenv.env"

MUTANTS = (
    Mutant(
        "tree-updated-in-place",
        "a write changes the directory it lands in instead of a copy, so every snapshot and "
        "fork that shares the directory sees it",
        f"{_ENV}:_put",
        "new = dict(node)",
        "new = node",
        "fork-isolation",
    ),
    Mutant(
        "snapshot-reseeds",
        "a snapshot records the random stream at the seed, not where it is",
        f"{_ENV}:Env.snapshot",
        "self.rng.get_state()",
        "torch.Generator().manual_seed(self.seed).get_state()",
        "restore-bit-for-bit",
    ),
    Mutant(
        "step-counter-not-restored",
        "a restored episode starts counting steps from zero, so it runs past the step limit",
        f"{_ENV}:Env.restore",
        "env.steps = snap.steps",
        "env.steps = 0",
        "restore-bit-for-bit",
    ),
    Mutant(
        "acts-while-paused",
        "the step guard accepts a paused episode",
        f"{_ENV}:Env.step",
        'self._require("running", doing="act in")',
        'self._require("running", "paused", doing="act in")',
        "pause-resume",
    ),
    Mutant(
        "mv-keeps-the-source",
        "mv places the node at the destination without removing it from the source",
        f"{_ENV}:Env._act",
        "self.root = _put(_put(self.root, parts, None), _parts(text), node)",
        "self.root = _put(self.root, _parts(text), node)",
        "tree-vs-flat",
    ),
    Mutant(
        "task-files-one-number-short",
        "the shared task generator draws file sizes from 2 to 4 instead of 2 to 5",
        f"{_ENV}:task_numbers",
        "torch.randint(2, 6, (1,), generator=gen)",
        "torch.randint(2, 5, (1,), generator=gen)",
        "tree-vs-flat",
        kind="independent-reference",
    ),
    Mutant(
        "probe-from-the-global-stream",
        "a probe draws its latency from torch's global stream, not the environment's seeded stream",
        f"{_ENV}:Env._act",
        "torch.randint(1, 500, (1,), generator=self.rng)",
        "torch.randint(1, 500, (1,))",
        "task-and-seed",
        kind="statistics",
    ),
)
