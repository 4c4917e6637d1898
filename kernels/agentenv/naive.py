"""The same environment the obvious way: the file system as one flat dictionary of full
paths, snapshots as deep copies, and a past state reached again by replaying every
action from the seed.

It shares the commands and their observations with ``env.Env`` (the observations are
the environment's interface), but none of its code: the tree, the snapshots and forks,
and the task's data are written here again from the task's statement, so they are
checked against something written independently.
"""

from __future__ import annotations

import copy

import torch

from kernels.agentenv.env import MAX_STEPS, Transition

__all__ = ["FlatEnv", "replay", "task_files"]


def task_files(seed: int) -> list[list[int]]:
    """The task's data from its statement: three files, each of 2 to 5 numbers from 0 to
    99, drawn in that order (size, then numbers) from a generator seeded with ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    files = []
    for _ in range(3):
        size = int(torch.randint(2, 6, (1,), generator=gen))
        files.append([int(n) for n in torch.randint(0, 100, (size,), generator=gen)])
    return files


class FlatEnv:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.paths: dict[str, str] = {}  # "/a/b" → contents, or "<dir>"
        self.steps = 0
        self.done = False
        self.rng = torch.Generator().manual_seed(seed)

    def reset(self) -> None:
        self.paths = {"/task": "<dir>", "/task/README": "write the sum of every number in /data to /out/answer"}
        self.paths["/data"] = "<dir>"
        for i, numbers in enumerate(task_files(self.seed)):
            self.paths[f"/data/{i}.txt"] = " ".join(map(str, numbers))
        self.paths["/out"] = "<dir>"

    def copy(self) -> FlatEnv:
        twin = FlatEnv(self.seed)
        twin.paths, twin.steps, twin.done = copy.deepcopy(self.paths), self.steps, self.done
        twin.rng.set_state(self.rng.get_state().clone())
        return twin

    def _norm(self, path: str) -> str:
        return "/" + "/".join(p for p in path.split("/") if p)

    def _is_dir(self, path: str) -> bool:
        return path == "/" or self.paths.get(path) == "<dir>"

    def _under(self, path: str) -> list[str]:
        return [p for p in self.paths if p == path or p.startswith(path + "/")]

    def _missing(self, parent: str, paths: dict[str, str] | None = None) -> str | None:
        """The first component of ``parent`` that is not a directory, if any."""
        paths = self.paths if paths is None else paths
        prefix = ""
        for name in [p for p in parent.split("/") if p]:
            prefix += "/" + name
            if paths.get(prefix) != "<dir>":
                return name
        return None

    def step(self, action: str) -> Transition:
        assert not self.done, "the episode is over"
        self.steps += 1
        observation, reward, done = self._act(action)
        if not done and self.steps >= MAX_STEPS:
            observation, done = observation + "; step limit reached", True
        self.done = done
        return Transition(self.steps, action, observation, reward, done)

    def _act(self, action: str) -> tuple[str, float, bool]:
        verb, _, rest = action.partition(" ")
        raw, _, text = rest.partition(" ")
        path = self._norm(raw)
        parent = path.rsplit("/", 1)[0] or "/"
        if verb == "submit":
            expected = sum(sum(n) for n in task_files(self.seed))
            answer = self.paths.get("/out/answer")
            if answer is not None and answer != "<dir>" and answer.strip() == str(expected):
                return "correct", 1.0, True
            return f"wrong: /out/answer is {None if answer is None else answer!r}", 0.0, True
        if verb == "probe":
            return f"latency {int(torch.randint(1, 500, (1,), generator=self.rng))} ms", 0.0, False
        if verb == "ls":
            if not self._is_dir(path):
                return f"error: no directory {raw or '/'}", 0.0, False
            depth = 0 if path == "/" else path.count("/")
            names = {p.split("/")[depth + 1] for p in self.paths if p.startswith(path.rstrip("/") + "/")}
            return " ".join(sorted(names)), 0.0, False
        if verb == "cat":
            value = self.paths.get(path)
            return (value if value is not None and value != "<dir>" else f"error: no file {raw}"), 0.0, False
        if path == "/":
            return f"error: {verb} needs a path", 0.0, False
        missing = self._missing(parent)
        if verb in ("write", "append", "mkdir") and missing is not None:
            return f"error: no directory /{missing}", 0.0, False
        if verb == "write":
            for p in self._under(path):
                del self.paths[p]
            self.paths[path] = text
            return f"wrote {len(text)} bytes to {raw}", 0.0, False
        if verb == "append":
            if self._is_dir(path):
                return f"error: {raw} is a directory", 0.0, False
            self.paths[path] = self.paths.get(path, "") + text
            return f"{raw} is {len(self.paths[path])} bytes", 0.0, False
        if verb == "mkdir":
            if path in self.paths:
                return f"error: {raw} exists", 0.0, False
            self.paths[path] = "<dir>"
            return f"created {raw}", 0.0, False
        if verb == "rm":
            if path not in self.paths:
                return f"error: no such path {raw}", 0.0, False
            for p in self._under(path):
                del self.paths[p]
            return f"removed {raw}", 0.0, False
        if verb == "mv":
            if path not in self.paths:
                return f"error: no such path {raw}", 0.0, False
            dst = self._norm(text)
            if dst == "/":
                return "error: mv needs a destination", 0.0, False
            moved = {dst + p[len(path) :]: self.paths[p] for p in self._under(path)}
            remaining = {p: v for p, v in self.paths.items() if not (p == path or p.startswith(path + "/"))}
            missing = self._missing(dst.rsplit("/", 1)[0], remaining)
            if missing is not None:
                return f"error: no directory /{missing}", 0.0, False
            self.paths = {p: v for p, v in remaining.items() if not (p == dst or p.startswith(dst + "/"))}
            self.paths.update(moved)
            return f"moved {raw} to {text}", 0.0, False
        return f"error: unknown command {verb}", 0.0, False

    def files(self) -> dict[str, str]:
        return dict(sorted(self.paths.items()))


def replay(seed: int, actions: list[str]) -> tuple[FlatEnv, list[Transition]]:
    """A fresh episode from ``seed`` that replays ``actions``."""
    env = FlatEnv(seed)
    env.reset()
    return env, [env.step(a) for a in actions]
