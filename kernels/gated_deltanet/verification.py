"""Declared verification of Gated DeltaNet.

Compared: the chunkwise WY form against the float32 token loop, on outputs, final
state and the gradients of q, k, v, g, β and the initial state (random cotangents), for
lengths that are not multiples of the chunk, K ≠ V, no initial state and an explicit
scale, under strong gates (mean log-decay −2 and −6) and over 500 tokens; and α = 1
against an independent DeltaNet loop.
"""

from __future__ import annotations

import torch

from kernels.check_inputs import RECURRENCE_CASES, linear_attention_inputs, recurrence_checks, recurrence_form
from kernels.checks import Verification, case, check
from kernels.deltanet.naive import naive_recurrent_delta_rule
from kernels.gated_deltanet.chunk import chunk_gated_delta_rule
from kernels.gated_deltanet.naive import naive_recurrent_gated_delta_rule
from kernels.measures import Outcome, Setting, compare_all

CASES = (*RECURRENCE_CASES, case(B=1, T=70, H=1, K=8, V=8, C=64))
NAMES = ("q", "k", "v", "g", "beta", "h0")


_reference = recurrence_form(naive_recurrent_gated_delta_rule, NAMES[:5])
_chunked = recurrence_form(chunk_gated_delta_rule, NAMES[:5], chunk_size=lambda c: c.C)


@check("alpha-one-is-deltanet", 1e-5)
def alpha_one_is_deltanet(s: Setting) -> Outcome:
    """With alpha = 1 (g = 0) Gated DeltaNet is DeltaNet."""
    c = CASES[0]
    x = linear_attention_inputs(s, c, s.generator(60))
    open_gates = {**x, "g": torch.zeros_like(x["g"])}
    o1, h1 = naive_recurrent_delta_rule(x["q"], x["k"], x["v"], x["beta"], initial_state=x["h0"])
    o2, h2 = _reference(open_gates, c)
    o3, h3 = _chunked(open_gates, c)
    return compare_all([("o recurrent", o1, o2), ("ht recurrent", h1, h2), ("o chunk", o1, o3), ("ht chunk", h1, h3)])


VERIFICATION = Verification(
    "gated-deltanet",
    __doc__ or "",
    (*recurrence_checks("Gated DeltaNet", _reference, _chunked, NAMES, CASES), alpha_one_is_deltanet),
)
