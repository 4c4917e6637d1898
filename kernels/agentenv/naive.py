"""The obvious way to get back to a past state: start a fresh sandbox from the same
seed and replay every action up to that point."""

from __future__ import annotations

from kernels.agentenv.sandbox import Sandbox

__all__ = ["replay"]


def replay(seed: int, actions: list[str]) -> tuple[Sandbox, list[str]]:
    box = Sandbox(seed)
    return box, [box.step(a) for a in actions]
