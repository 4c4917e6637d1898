"""Declared verification of Mamba2's state-space duality: the chunked (masked decayed
attention plus inter-chunk state) form against the recurrence, outputs, final state and
gradients (random cotangents), also with K ≠ V, no initial state and an explicit scale,
under strong decay and over 500 tokens."""

from __future__ import annotations

import torch

from kernels.check_inputs import RECURRENCE_CASES, recurrence_checks
from kernels.checks import Case, Verification
from kernels.mamba2.naive import naive_recurrent_ssd
from kernels.mamba2.ssd import chunk_ssd

NAMES = ("q", "k", "v", "g", "h0")


def _scale(x: dict[str, torch.Tensor], c: Case) -> float:
    """The case's explicit scale, else 1/sqrt(K) (Mamba2's own default is 1)."""
    return float(c.get("scale") or x["q"].shape[-1] ** -0.5)


def _reference(x: dict[str, torch.Tensor], c: Case) -> tuple[torch.Tensor, torch.Tensor]:
    return naive_recurrent_ssd(x["q"], x["k"], x["v"], x["g"], scale=_scale(x, c), initial_state=x.get("h0"))


def _chunked(x: dict[str, torch.Tensor], c: Case) -> tuple[torch.Tensor, torch.Tensor]:
    return chunk_ssd(x["q"], x["k"], x["v"], x["g"], scale=_scale(x, c), initial_state=x.get("h0"), chunk_size=c.C)


VERIFICATION = Verification(
    "mamba2",
    __doc__ or "",
    recurrence_checks("state-space dual form", _reference, _chunked, NAMES),
    shapes=tuple(c.id for c in RECURRENCE_CASES),
)
