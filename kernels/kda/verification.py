"""Declared verification of Kimi Delta Attention (channel-wise decay).

Compared: the chunkwise form (with sub-chunked decays) against the float32 token loop
(written in transition-matrix form), on outputs, final state and gradients (random
cotangents), also with K ≠ V, no initial state and an explicit scale, under strong
gates (mean log-decay −2 and −6) and over 500 tokens; and the reduction to Gated
DeltaNet when every channel of a head shares one gate.
"""

from __future__ import annotations

from kernels.check_inputs import RECURRENCE_CASES, linear_attention_inputs, recurrence_checks, recurrence_form
from kernels.checks import Verification, case, check
from kernels.families import K_NE_V
from kernels.gated_deltanet.chunk import chunk_gated_delta_rule
from kernels.gated_deltanet.naive import naive_recurrent_gated_delta_rule
from kernels.kda.chunk import chunk_kda
from kernels.kda.naive import naive_recurrent_kda
from kernels.measures import Outcome, Setting, compare_all

#: the sub-chunk is a quarter of the chunk
CASES = (*RECURRENCE_CASES, case(B=1, T=70, H=1, K=8, V=8, C=64))
NAMES = ("q", "k", "v", "g", "beta", "h0")


_reference = recurrence_form(naive_recurrent_kda, NAMES[:5])
_chunked = recurrence_form(chunk_kda, NAMES[:5], chunk_size=lambda c: c.C, sub_chunk=lambda c: c.C // 4)


@check("equal-gates-is-gdn", 1e-5, covers=(K_NE_V,))
def equal_gates_reduce_to_gdn(s: Setting) -> Outcome:
    """When the gates are equal across channels KDA reduces to Gated DeltaNet (recurrent
    and chunkwise), also with K != V."""
    pairs = []
    for c in (CASES[0], CASES[3]):
        x = linear_attention_inputs(s, c, s.generator(60))  # one gate per head
        wide = {**x, "g": x["g"][..., None].expand(c.B, c.T, c.H, c.K)}
        args, kw = (x["q"], x["k"], x["v"]), {"scale": c.get("scale"), "initial_state": x.get("h0")}
        o1, h1 = naive_recurrent_gated_delta_rule(*args, x["g"], x["beta"], **kw)
        o2, h2 = _reference(wide, c)
        o3, h3 = chunk_gated_delta_rule(*args, x["g"], x["beta"], chunk_size=c.C, **kw)
        o4, h4 = _chunked(wide, c)
        pairs += [(f"o recurrent {c.id}", o1, o2), (f"ht recurrent {c.id}", h1, h2)]
        pairs += [(f"o chunk {c.id}", o3, o4), (f"ht chunk {c.id}", h3, h4)]
    return compare_all(pairs)


VERIFICATION = Verification(
    "kda",
    __doc__ or "",
    (*recurrence_checks("KDA", _reference, _chunked, NAMES, CASES, channel_gates=True), equal_gates_reduce_to_gdn),
)
