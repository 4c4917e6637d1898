"""UltraEP: greedy hot-expert replication and rerouting to replicas."""

from __future__ import annotations

from kernels.ultraep.replicate import max_load, replicate, replicated_forward, reroute

__all__ = ["max_load", "replicate", "replicated_forward", "reroute"]
