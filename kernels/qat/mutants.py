"""Bugs a person makes in a hand-written straight-through fake quantiser."""

from __future__ import annotations

from kernels.mutation import Mutant

_STE = "kernels.qat.naive:fake_quant_ste"

MUTANTS = (
    Mutant(
        "mask-excludes-top-level",
        "the range mask excludes the top level q_max itself",
        _STE,
        "(level <= q_max)",
        "(level < q_max)",
        "gradient-mask",
    ),
    Mutant(
        "unmasked-ste",
        "the straight-through gradient is not masked: clamped values get gradient 1",
        _STE,
        "return x * inside + (snapped - x * inside).detach()",
        "return x + (snapped - x).detach()",
        "gradient-mask",
    ),
    Mutant(
        "floor-instead-of-round",
        "values are floored to the grid instead of rounded",
        _STE,
        "level = torch.round(x * (1.0 / s)) + z",
        "level = torch.floor(x * (1.0 / s)) + z",
        "ste-vs-torch",
    ),
    Mutant(
        "zero-point-added-back",
        "the zero point is added instead of subtracted when going back from the level",
        _STE,
        "snapped = (level.clamp(q_min, q_max) - z) * s",
        "snapped = (level.clamp(q_min, q_max) + z) * s",
        "on-the-grid",
    ),
)
