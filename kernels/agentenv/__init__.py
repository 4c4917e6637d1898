"""AgentENV's contract on a small in-process environment: snapshot, fork, pause, resume."""

from __future__ import annotations

from kernels.agentenv.env import Env, EnvError, Snapshot, Transition

__all__ = ["Env", "EnvError", "Snapshot", "Transition"]
