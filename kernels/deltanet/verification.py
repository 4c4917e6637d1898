"""Declared verification of DeltaNet: the chunkwise (UT transform) form against the
token loop, outputs, final state and gradients (random cotangents), also with K ≠ V,
no initial state and an explicit scale, and over 500 tokens."""

from __future__ import annotations

import torch

from kernels.check_inputs import RECURRENCE_CASES, recurrence_checks
from kernels.checks import Case, Verification
from kernels.deltanet.chunk import chunk_delta_rule
from kernels.deltanet.naive import naive_recurrent_delta_rule

NAMES = ("q", "k", "v", "beta", "h0")


def _reference(x: dict[str, torch.Tensor], c: Case) -> tuple[torch.Tensor, torch.Tensor]:
    return naive_recurrent_delta_rule(
        x["q"], x["k"], x["v"], x["beta"], scale=c.get("scale"), initial_state=x.get("h0")
    )


def _chunked(x: dict[str, torch.Tensor], c: Case) -> tuple[torch.Tensor, torch.Tensor]:
    return chunk_delta_rule(
        x["q"], x["k"], x["v"], x["beta"], scale=c.get("scale"), initial_state=x.get("h0"), chunk_size=c.C
    )


VERIFICATION = Verification(
    "deltanet",
    __doc__ or "",
    recurrence_checks("delta rule", _reference, _chunked, NAMES, gated=False),
    shapes=tuple(c.id for c in RECURRENCE_CASES),
)
