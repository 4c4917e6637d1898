"""LLM MegaKernel: a forward pass as one task list run by one interpreter loop."""

from __future__ import annotations

from kernels.llm_megakernel.schedule import build_tasks, run

__all__ = ["build_tasks", "run"]
