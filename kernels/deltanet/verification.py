"""Declared verification of DeltaNet: the chunkwise (UT transform) form against the
per-head token loop, outputs, final state and gradients."""

from __future__ import annotations

from kernels.check_inputs import linear_attention_inputs, state_cotangents
from kernels.checks import Check, Outcome, Setting, Verification, compare_forms, shape_id, worst
from kernels.deltanet.chunk import chunk_delta_rule
from kernels.deltanet.naive import naive_recurrent_delta_rule

SHAPES = ((2, 45, 2, 16, 16), (1, 70, 1, 32, 32))
INPUTS = ("q", "k", "v", "beta", "h0")


def chunk_matches_recurrent(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, C) in enumerate(SHAPES):
        x = linear_attention_inputs(s, B, T, H, D, offset=i)

        def ref(q, k, v, beta, h0):  # type: ignore[no-untyped-def]
            return naive_recurrent_delta_rule(q, k, v, beta, initial_state=h0)

        def fast(q, k, v, beta, h0, C=C):  # type: ignore[no-untyped-def]
            return chunk_delta_rule(q, k, v, beta, initial_state=h0, chunk_size=C)

        results.append(
            compare_forms(
                ref,
                fast,
                [x[n] for n in INPUTS],
                state_cotangents(s, B, T, H, D, offset=100 + i),
                outputs=("o", "ht"),
                grads=INPUTS,
                tag=shape_id(B=B, T=T, H=H, D=D),
            )
        )
    return worst(results)


VERIFICATION = Verification(
    technique="deltanet",
    compares="chunkwise UT-transform form against the per-head token loop: outputs, final "
    "state, gradients",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=(
        Check(
            "chunk-vs-recurrent",
            "The chunkwise delta rule equals the token-by-token delta rule, "
            "outputs, final state and gradients.",
            chunk_matches_recurrent,
            tolerance=1e-5,
            gradients=True,
        ),
    ),
)
