"""Declared verification of Mamba2's state-space duality: the chunked (masked decayed
attention plus inter-chunk state) form against the recurrence, with gradients."""

from __future__ import annotations

from kernels.check_inputs import linear_attention_inputs, state_cotangents
from kernels.checks import Check, Outcome, Setting, Verification, compare_forms, shape_id, worst
from kernels.mamba2.naive import naive_recurrent_ssd
from kernels.mamba2.ssd import chunk_ssd

SHAPES = ((2, 75, 2, 16, 16), (1, 100, 3, 32, 64))
INPUTS = ("q", "k", "v", "g", "h0")


def chunk_matches_recurrent(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, C) in enumerate(SHAPES):
        x = linear_attention_inputs(s, B, T, H, D, offset=i)

        def ref(q, k, v, g, h0, D=D):  # type: ignore[no-untyped-def]
            return naive_recurrent_ssd(q, k, v, g, scale=D**-0.5, initial_state=h0)

        def fast(q, k, v, g, h0, C=C, D=D):  # type: ignore[no-untyped-def]
            return chunk_ssd(q, k, v, g, scale=D**-0.5, initial_state=h0, chunk_size=C)

        results.append(
            compare_forms(
                ref,
                fast,
                [x[n] for n in INPUTS],
                state_cotangents(s, B, T, H, D, offset=200 + i),
                outputs=("o", "ht"),
                grads=INPUTS,
                tag=shape_id(B=B, T=T, H=H, D=D),
            )
        )
    return worst(results)


VERIFICATION = Verification(
    technique="mamba2",
    compares="chunked state-space-duality form against the scalar-decay recurrence: outputs, final "
    "state, gradients",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=(
        Check(
            "ssd-vs-recurrent",
            "The chunked (dual, attention-like) form equals the state-space "
            "recurrence, outputs, final state and gradients.",
            chunk_matches_recurrent,
            tolerance=1e-5,
            gradients=True,
        ),
    ),
)
