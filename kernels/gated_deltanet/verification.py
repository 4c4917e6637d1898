"""Declared verification of Gated DeltaNet.

Compared: the chunkwise WY form against the float32 token loop, on outputs, final
state and the gradients of q, k, v, g, β and the initial state, for lengths that are
not multiples of the chunk; and α = 1 against an independent DeltaNet loop.
"""

from __future__ import annotations

import torch

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
from kernels.deltanet.naive import naive_recurrent_delta_rule
from kernels.gated_deltanet.chunk import chunk_gated_delta_rule
from kernels.gated_deltanet.naive import naive_recurrent_gated_delta_rule

#: (B, T, H, D, chunk): T is never a power of two nor a multiple of the chunk.
SHAPES = ((2, 75, 2, 32, 16), (1, 100, 3, 16, 32), (1, 130, 1, 24, 64))


def _pair(chunk: int) -> tuple[Recurrence, Recurrence]:
    def reference(q, k, v, g, beta, h0):  # type: ignore[no-untyped-def]
        return naive_recurrent_gated_delta_rule(q, k, v, g, beta, initial_state=h0)

    def structured(q, k, v, g, beta, h0):  # type: ignore[no-untyped-def]
        return chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0, chunk_size=chunk)

    return reference, structured


def chunk_matches_recurrent(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, C) in enumerate(SHAPES):
        x = linear_attention_inputs(s, B, T, H, D, offset=i)
        results.append(
            compare_forms(
                *_pair(C),
                list(x.values()),
                outputs=("o", "ht"),
                tag=shape_id(B=B, T=T, H=H, D=D),
            )
        )
    return worst(results)


def gradients_match(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, C) in enumerate(SHAPES[:2]):
        x = linear_attention_inputs(s, B, T, H, D, offset=10 + i)
        results.append(
            compare_forms(
                *_pair(C),
                list(x.values()),
                state_cotangents(s, B, T, H, D, offset=20 + i),
                outputs=(),
                grads=list(x),
            )
        )
    return worst(results)


def alpha_one_is_deltanet(s: Setting) -> Outcome:
    B, T, H, D, C = SHAPES[0]
    x = linear_attention_inputs(s, B, T, H, D, offset=30)
    zeros = torch.zeros_like(x["g"])
    o1, h1 = naive_recurrent_delta_rule(x["q"], x["k"], x["v"], x["beta"], initial_state=x["h0"])
    o2, h2 = naive_recurrent_gated_delta_rule(
        x["q"], x["k"], x["v"], zeros, x["beta"], initial_state=x["h0"]
    )
    o3, h3 = chunk_gated_delta_rule(
        x["q"], x["k"], x["v"], zeros, x["beta"], initial_state=x["h0"], chunk_size=C
    )
    return compare_all(
        [
            ("o recurrent", o1, o2),
            ("ht recurrent", h1, h2),
            ("o chunk", o1, o3),
            ("ht chunk", h1, h3),
        ]
    )


VERIFICATION = Verification(
    technique="gated-deltanet",
    compares="chunkwise WY form against the float32 token loop: outputs, final state and gradients "
    "of q, k, v, g, beta and h0; alpha = 1 against an independent DeltaNet loop",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=(
        Check(
            "chunk-vs-recurrent",
            "The chunkwise (WY) form equals the recurrence: outputs and final state.",
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
            "alpha-one-is-deltanet",
            "With alpha = 1 (g = 0) Gated DeltaNet is DeltaNet.",
            alpha_one_is_deltanet,
            tolerance=1e-5,
        ),
    ),
)
