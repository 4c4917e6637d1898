"""DeepEP: expert-parallel dispatch and combine over simulated ranks."""

from __future__ import annotations

from kernels.deepep.dispatch import combine, dispatch, expert_parallel_moe

__all__ = ["combine", "dispatch", "expert_parallel_moe"]
