"""Declared verification of Kimi Delta Attention (channel-wise decay).

Compared: the chunkwise form (with sub-chunked decays) against the float32 token loop,
on outputs, final state and gradients, including strong decays; and the reduction to
Gated DeltaNet when every channel of a head shares one gate.
"""

from __future__ import annotations

from kernels.check_inputs import Recurrence, linear_attention_inputs, state_cotangents
from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare_all,
    compare_forms,
    shape_id,
    worst,
)
from kernels.gated_deltanet.chunk import chunk_gated_delta_rule
from kernels.gated_deltanet.naive import naive_recurrent_gated_delta_rule
from kernels.kda.chunk import chunk_kda
from kernels.kda.naive import naive_recurrent_kda

#: (B, T, H, D, chunk, sub-chunk)
SHAPES = ((2, 75, 2, 32, 16, 4), (1, 100, 3, 16, 32, 8), (1, 70, 1, 24, 64, 16))


def _run(chunk: int, sub: int) -> tuple[Recurrence, Recurrence]:
    def reference(q, k, v, g, beta, h0):  # type: ignore[no-untyped-def]
        return naive_recurrent_kda(q, k, v, g, beta, initial_state=h0)

    def structured(q, k, v, g, beta, h0):  # type: ignore[no-untyped-def]
        return chunk_kda(q, k, v, g, beta, initial_state=h0, chunk_size=chunk, sub_chunk=sub)

    return reference, structured


def chunk_matches_recurrent(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, C, S) in enumerate(SHAPES):
        for strength in (1.0, 8.0):
            x = linear_attention_inputs(s, B, T, H, D, channel_gates=True, offset=i)
            x["g"] = x["g"] * strength
            tag = shape_id(B=B, T=T, H=H, D=D) + f" gate x{strength:g}"
            results.append(
                compare_forms(*_run(C, S), list(x.values()), outputs=("o", "ht"), tag=tag)
            )
    return worst(results)


def gradients_match(s: Setting) -> Outcome:
    B, T, H, D, C, S = SHAPES[0]
    x = linear_attention_inputs(s, B, T, H, D, channel_gates=True, offset=40)
    return compare_forms(
        *_run(C, S),
        list(x.values()),
        state_cotangents(s, B, T, H, D, offset=41),
        outputs=(),
        grads=list(x),
    )


def equal_gates_reduce_to_gdn(s: Setting) -> Outcome:
    B, T, H, D, C, S = SHAPES[0]
    x = linear_attention_inputs(s, B, T, H, D, offset=50)  # one gate per head
    wide = x["g"][..., None].expand(B, T, H, D)
    args = (x["q"], x["k"], x["v"])
    o1, h1 = naive_recurrent_gated_delta_rule(*args, x["g"], x["beta"], initial_state=x["h0"])
    o2, h2 = naive_recurrent_kda(*args, wide, x["beta"], initial_state=x["h0"])
    o3, h3 = chunk_gated_delta_rule(*args, x["g"], x["beta"], initial_state=x["h0"], chunk_size=C)
    o4, h4 = chunk_kda(*args, wide, x["beta"], initial_state=x["h0"], chunk_size=C, sub_chunk=S)
    return compare_all(
        [
            ("o recurrent", o1, o2),
            ("ht recurrent", h1, h2),
            ("o chunk", o3, o4),
            ("ht chunk", h3, h4),
        ]
    )


VERIFICATION = Verification(
    technique="kda",
    compares="chunkwise form with sub-chunked channel-wise decays against the float32 token loop: "
    "outputs, final state and gradients; equal gates across channels against Gated DeltaNet",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C, S=S) for B, T, H, D, C, S in SHAPES),
    gradients=True,
    checks=(
        Check(
            "chunk-vs-recurrent",
            "The chunkwise form equals the recurrence (outputs and final "
            "state), also under gates eight times stronger.",
            chunk_matches_recurrent,
            tolerance=1e-5,
        ),
        Check(
            "gradients",
            "Gradients of q, k, v, g, beta and the initial state agree between the "
            "chunkwise form and the recurrence.",
            gradients_match,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "equal-gates-is-gdn",
            "When the gates are equal across channels KDA reduces to Gated "
            "DeltaNet (recurrent and chunkwise).",
            equal_gates_reduce_to_gdn,
            tolerance=1e-5,
        ),
    ),
)
