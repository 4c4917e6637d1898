"""A small agent environment with AgentENV's contract: snapshot, fork, pause, resume.

AgentENV runs each environment in a microVM and offers snapshot / fork / pause / resume
over it. This is the same contract on a small environment that runs in process:

- **State**: a file-system tree (directories and text files), a step counter, a random
  stream (a ``torch.Generator``: the environment's own nondeterminism, a flaky tool's
  latency, say) and the episode's phase.
- **Phases**, a state machine: ``ready`` → ``running`` ⇄ ``paused`` → ``done``.
  ``reset()`` starts an episode; ``pause()`` and ``resume()`` move between running and
  paused; ``submit`` or the step limit ends it. Anything else (acting while paused or
  done, resuming what is running) raises :class:`EnvError`.
- **The task**: ``/data`` holds files of numbers drawn from the seed; the episode is
  won (reward 1) when ``/out/answer`` holds their sum at ``submit``.
- **Actions** are commands: ``ls PATH``, ``cat PATH``, ``write PATH TEXT``, ``append PATH
  TEXT``, ``mkdir PATH``, ``rm PATH``, ``mv SRC DST``, ``probe`` (a random draw) and
  ``submit``. Each step returns a :class:`Transition`.

The tree is persistent: directories are never changed in place; a write copies the
directories on its path and shares every other subtree. So a snapshot is O(1) (it
keeps the root), a fork shares its parent's tree, and forked episodes still never see
each other's writes. A restored snapshot continues bit for bit as the original did:
the random stream's state is part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from kg.errors import KernelError

__all__ = ["MAX_STEPS", "Env", "EnvError", "Snapshot", "Transition", "task_numbers"]

#: A directory maps names to subdirectories or file contents; never changed in place.
Tree = Mapping[str, "Tree | str"]
MAX_STEPS = 40
PHASES = ("ready", "running", "paused", "done")


class EnvError(KernelError):
    """An action or transition the environment's state machine does not allow."""


@dataclass(frozen=True)
class Transition:
    step: int
    action: str
    observation: str
    reward: float
    done: bool


@dataclass(frozen=True)
class Snapshot:
    root: Tree
    phase: str
    steps: int
    rng_state: torch.Tensor
    seed: int


def task_numbers(seed: int) -> list[list[int]]:
    """The task's data: three files of numbers, drawn from the seed."""
    gen = torch.Generator().manual_seed(seed)
    return [
        torch.randint(0, 100, (int(torch.randint(2, 6, (1,), generator=gen)),), generator=gen).tolist()
        for _ in range(3)
    ]


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


def _get(root: Tree, parts: list[str]) -> Tree | str | None:
    node: Tree | str | None = root
    for name in parts:
        if not isinstance(node, Mapping):
            return None
        node = node.get(name)
    return node


def _put(node: Tree, parts: list[str], value: Tree | str | None) -> Tree:
    """A copy of ``node`` with ``value`` at ``parts`` (None removes it); only the
    directories on the path are copied."""
    new = dict(node)
    name, rest = parts[0], parts[1:]
    if not rest:
        if value is None:
            new.pop(name, None)
        else:
            new[name] = value
        return new
    child = node.get(name)
    if not isinstance(child, Mapping):
        raise EnvError(f"no directory /{name}", hint="Create it with mkdir first.")
    new[name] = _put(child, rest, value)
    return new


def flatten(root: Tree, prefix: str = "") -> dict[str, str]:
    """Every file and directory by its full path (directories as ``"<dir>"``)."""
    out: dict[str, str] = {}
    for name, node in sorted(root.items()):
        path = f"{prefix}/{name}"
        if isinstance(node, Mapping):
            out[path] = "<dir>"
            out.update(flatten(node, path))
        else:
            out[path] = node
    return out


class Env:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.root: Tree = {}
        self.phase = "ready"
        self.steps = 0
        self.rng = torch.Generator().manual_seed(seed)

    # -- the state machine ------------------------------------------------------------

    def _require(self, *phases: str, doing: str) -> None:
        if self.phase not in phases:
            raise EnvError(
                f"cannot {doing} an episode that is {self.phase}",
                hint=f"{doing} needs an episode that is {' or '.join(phases)}.",
            )

    def reset(self) -> str:
        self._require("ready", doing="reset")
        root: Tree = {"task": {"README": "write the sum of every number in /data to /out/answer"}}
        data: dict[str, Tree | str] = {}
        for i, numbers in enumerate(task_numbers(self.seed)):
            data[f"{i}.txt"] = " ".join(map(str, numbers))
        self.root = {**root, "data": data, "out": {}}
        self.phase = "running"
        return "episode started: cat /task/README"

    def pause(self) -> None:
        self._require("running", doing="pause")
        self.phase = "paused"

    def resume(self) -> None:
        self._require("paused", doing="resume")
        self.phase = "running"

    # -- acting ------------------------------------------------------------------------

    def step(self, action: str) -> Transition:
        self._require("running", doing="act in")
        self.steps += 1
        observation, reward, done = self._act(action)
        if not done and self.steps >= MAX_STEPS:
            observation, done = observation + "; step limit reached", True
        if done:
            self.phase = "done"
        return Transition(self.steps, action, observation, reward, done)

    def _act(self, action: str) -> tuple[str, float, bool]:
        verb, _, rest = action.partition(" ")
        path, _, text = rest.partition(" ")
        parts = _parts(path)
        try:
            if verb == "submit":
                return self._grade()
            if verb == "probe":
                return f"latency {int(torch.randint(1, 500, (1,), generator=self.rng))} ms", 0.0, False
            if verb == "ls":
                node = _get(self.root, parts)
                if not isinstance(node, Mapping):
                    return f"error: no directory {path or '/'}", 0.0, False
                return " ".join(sorted(node)), 0.0, False
            if verb == "cat":
                node = _get(self.root, parts)
                return (node if isinstance(node, str) else f"error: no file {path}"), 0.0, False
            if not parts:
                return f"error: {verb} needs a path", 0.0, False
            if verb == "write":
                self.root = _put(self.root, parts, text)
                return f"wrote {len(text)} bytes to {path}", 0.0, False
            if verb == "append":
                old = _get(self.root, parts)
                if isinstance(old, Mapping):
                    return f"error: {path} is a directory", 0.0, False
                self.root = _put(self.root, parts, (old or "") + text)
                return f"{path} is {len((old or '') + text)} bytes", 0.0, False
            if verb == "mkdir":
                if _get(self.root, parts) is not None:
                    return f"error: {path} exists", 0.0, False
                self.root = _put(self.root, parts, {})
                return f"created {path}", 0.0, False
            if verb == "rm":
                if _get(self.root, parts) is None:
                    return f"error: no such path {path}", 0.0, False
                self.root = _put(self.root, parts, None)
                return f"removed {path}", 0.0, False
            if verb == "mv":
                node = _get(self.root, parts)
                if node is None:
                    return f"error: no such path {path}", 0.0, False
                if not _parts(text):
                    return "error: mv needs a destination", 0.0, False
                self.root = _put(_put(self.root, parts, None), _parts(text), node)
                return f"moved {path} to {text}", 0.0, False
        except EnvError as exc:
            return f"error: {exc.message}", 0.0, False
        return f"error: unknown command {verb}", 0.0, False

    def _grade(self) -> tuple[str, float, bool]:
        answer = _get(self.root, ["out", "answer"])
        expected = sum(sum(numbers) for numbers in task_numbers(self.seed))
        if isinstance(answer, str) and answer.strip() == str(expected):
            return "correct", 1.0, True
        return f"wrong: /out/answer is {answer!r}", 0.0, True

    # -- snapshot, restore, fork -------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The whole state; O(1) for the file system, which is never changed in place."""
        return Snapshot(self.root, self.phase, self.steps, self.rng.get_state(), self.seed)

    @classmethod
    def restore(cls, snap: Snapshot) -> Env:
        env = cls(snap.seed)
        env.root = snap.root
        env.phase = snap.phase
        env.steps = snap.steps
        env.rng.set_state(snap.rng_state)
        return env

    def fork(self) -> Env:
        """A new episode that continues from this one's state and shares nothing mutable."""
        return Env.restore(self.snapshot())

    def files(self) -> dict[str, str]:
        return flatten(self.root)
