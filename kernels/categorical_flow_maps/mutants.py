"""Bugs a person makes in the categorical flow map's closed form."""

from __future__ import annotations

from kernels.mutation import Mutant

_MAP = "kernels.categorical_flow_maps.flow_map:flow_map"

MUTANTS = (
    Mutant(
        "unnormalised-time",
        "the jump uses t − s instead of (t − s)/(1 − s), so it lands short of π",
        _MAP,
        "(t - s) / (1 - s) * (pi - x)",
        "(t - s) * (pi - x)",
        "closed-form-vs-euler",
    ),
    Mutant(
        "normalised-by-target-time",
        "the time is normalised by 1 − t instead of 1 − s",
        _MAP,
        "(t - s) / (1 - s)",
        "(t - s) / (1 - t + 1e-6)",
        "flow-map-identities",
    ),
    Mutant(
        "direction-reversed",
        "the map moves away from π: x + c·(x − π)",
        _MAP,
        "* (pi - x)",
        "* (x - pi)",
        "simplex",
    ),
)
