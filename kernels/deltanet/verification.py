"""Declared verification of DeltaNet: the chunkwise (UT transform) form against the
token loop, outputs, final state and gradients (random cotangents), and over 500 tokens."""

from __future__ import annotations

import torch

from kernels.check_inputs import recurrence_checks
from kernels.checks import Verification, shape_id
from kernels.deltanet.chunk import chunk_delta_rule
from kernels.deltanet.naive import naive_recurrent_delta_rule

SHAPES = ((2, 45, 2, 16, 16), (1, 70, 1, 12, 32))
NAMES = ("q", "k", "v", "beta", "h0")


def _reference(x: dict[str, torch.Tensor], chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    return naive_recurrent_delta_rule(x["q"], x["k"], x["v"], x["beta"], initial_state=x["h0"])


def _chunked(x: dict[str, torch.Tensor], chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    return chunk_delta_rule(x["q"], x["k"], x["v"], x["beta"], initial_state=x["h0"], chunk_size=chunk)


VERIFICATION = Verification(
    technique="deltanet",
    compares="chunkwise UT-transform form against the token loop: outputs, final state, gradients, and over 500 tokens",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=recurrence_checks("delta rule", _reference, _chunked, NAMES, SHAPES, gated=False),
)
