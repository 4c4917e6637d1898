"""AgentENV's contract on an in-process sandbox: snapshot, fork, pause, resume."""

from __future__ import annotations

from kernels.agentenv.sandbox import Paused, Sandbox, Snapshot

__all__ = ["Paused", "Sandbox", "Snapshot"]
