"""Bugs a person makes in a sandbox's snapshot, fork, pause and resume."""

from __future__ import annotations

from kernels.mutation import Mutant

_BOX = "kernels.agentenv.sandbox:Sandbox"

MUTANTS = (
    Mutant(
        "snapshot-reseeds",
        "a restored sandbox restarts its random stream from the seed instead of the snapshot",
        f"{_BOX}.restore",
        "box.rng.set_state(snap.rng_state.clone())",
        "box.rng.manual_seed(snap.seed)",
        "restore-vs-replay",
    ),
    Mutant(
        "fork-shares-files",
        "a fork reuses its parent's file table instead of a copy",
        f"{_BOX}.fork",
        "return Sandbox.restore(self.snapshot())",
        "box = Sandbox.restore(self.snapshot())\n    box.files = self.files\n    return box",
        "fork-isolation",
    ),
    Mutant(
        "pause-ignored",
        "a paused sandbox still acts",
        f"{_BOX}.step",
        "if self.paused:",
        "if False:",
        "pause-resume",
    ),
)
