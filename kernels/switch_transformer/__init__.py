"""Switch Transformer: top-1 routing with capacity, and the load-balancing loss."""

from __future__ import annotations

from kernels.switch_transformer.dispatch import capacity, load_balancing_loss, switch_dispatch

__all__ = ["capacity", "load_balancing_loss", "switch_dispatch"]
