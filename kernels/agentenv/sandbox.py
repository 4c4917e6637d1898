"""An in-process agent environment with snapshot, fork, pause and resume.

AgentENV runs each environment in a microVM and offers snapshot / fork / pause / resume
over it. This is the same contract on a small in-process sandbox: a file system (a dict
of files), a step counter and a random stream (a torch.Generator) that some actions
draw from. A snapshot captures all three, the generator's state included, so a restored
or forked sandbox continues exactly as the original would; a fork shares nothing with
its parent; a paused sandbox refuses to act until resumed.

Actions are strings: ``write NAME TEXT``, ``append NAME TEXT``, ``read NAME``, ``ls``,
``roll`` (draw a random number).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from kg.errors import KernelError

__all__ = ["Paused", "Sandbox", "Snapshot"]


class Paused(KernelError):
    """The sandbox is paused; resume it before acting."""


@dataclass(frozen=True)
class Snapshot:
    files: dict[str, str]
    steps: int
    rng_state: torch.Tensor
    seed: int


class Sandbox:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.files: dict[str, str] = {}
        self.steps = 0
        self.rng = torch.Generator().manual_seed(seed)
        self.paused = False

    def step(self, action: str) -> str:
        if self.paused:
            raise Paused("the sandbox is paused", hint="Call resume() before the next action.")
        verb, _, rest = action.partition(" ")
        name, _, text = rest.partition(" ")
        self.steps += 1
        if verb == "write":
            self.files[name] = text
            return f"wrote {len(text)} bytes to {name}"
        if verb == "append":
            self.files[name] = self.files.get(name, "") + text
            return f"{name} is {len(self.files[name])} bytes"
        if verb == "read":
            return self.files.get(name, f"error: no file {name}")
        if verb == "ls":
            return " ".join(sorted(self.files))
        if verb == "roll":
            return str(int(torch.randint(1000, (1,), generator=self.rng)))
        return f"error: unknown action {verb}"

    def snapshot(self) -> Snapshot:
        return Snapshot(
            copy.deepcopy(self.files), self.steps, self.rng.get_state().clone(), self.seed
        )

    @classmethod
    def restore(cls, snap: Snapshot) -> Sandbox:
        box = cls(snap.seed)
        box.files = copy.deepcopy(snap.files)
        box.steps = snap.steps
        box.rng.set_state(snap.rng_state.clone())
        return box

    def fork(self) -> Sandbox:
        return Sandbox.restore(self.snapshot())

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
