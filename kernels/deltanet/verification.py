"""Declared verification of DeltaNet: the chunkwise (UT transform) form against the
token loop, outputs, final state and gradients (random cotangents), also with K ≠ V,
no initial state and an explicit scale, and over 500 tokens."""

from __future__ import annotations

from kernels.check_inputs import RECURRENCE_CASES, recurrence_checks, recurrence_form
from kernels.checks import Verification
from kernels.deltanet.chunk import chunk_delta_rule
from kernels.deltanet.naive import naive_recurrent_delta_rule

NAMES = ("q", "k", "v", "beta", "h0")


_reference = recurrence_form(naive_recurrent_delta_rule, NAMES[:4])
_chunked = recurrence_form(chunk_delta_rule, NAMES[:4], chunk_size=lambda c: c.C)


VERIFICATION = Verification(
    "deltanet",
    __doc__ or "",
    recurrence_checks("delta rule", _reference, _chunked, NAMES, gated=False),
    shapes=tuple(c.id for c in RECURRENCE_CASES),
)
