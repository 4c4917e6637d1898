"""Declared verification of Mamba2's state-space duality: the chunked (masked decayed
attention plus inter-chunk state) form against the recurrence, outputs, final state and
gradients (random cotangents), under strong decay and over 500 tokens."""

from __future__ import annotations

import torch

from kernels.check_inputs import recurrence_checks
from kernels.checks import Verification, shape_id
from kernels.mamba2.naive import naive_recurrent_ssd
from kernels.mamba2.ssd import chunk_ssd

SHAPES = ((2, 45, 2, 16, 16), (1, 70, 3, 12, 32))
NAMES = ("q", "k", "v", "g", "h0")


def _reference(x: dict[str, torch.Tensor], chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    scale = x["q"].shape[-1] ** -0.5
    return naive_recurrent_ssd(x["q"], x["k"], x["v"], x["g"], scale=scale, initial_state=x["h0"])


def _chunked(x: dict[str, torch.Tensor], chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    scale = x["q"].shape[-1] ** -0.5
    return chunk_ssd(x["q"], x["k"], x["v"], x["g"], scale=scale, initial_state=x["h0"], chunk_size=chunk)


VERIFICATION = Verification(
    technique="mamba2",
    compares="chunked state-space-duality form against the scalar-decay recurrence: outputs, final "
    "state, gradients, also under strong decay and over 500 tokens",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=recurrence_checks("state-space dual form", _reference, _chunked, NAMES, SHAPES),
)
