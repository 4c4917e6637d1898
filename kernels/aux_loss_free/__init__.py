"""Auxiliary-loss-free load balancing: biased selection, unbiased weights, bias updates."""

from __future__ import annotations

from kernels.aux_loss_free.balance import bias_update, load_imbalance, route

__all__ = ["bias_update", "load_imbalance", "route"]
