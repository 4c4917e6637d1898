"""Categorical Flow Maps: the closed-form flow map on the probability simplex."""

from __future__ import annotations

from kernels.categorical_flow_maps.flow_map import flow_map

__all__ = ["flow_map"]
