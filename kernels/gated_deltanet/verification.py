"""Declared verification of Gated DeltaNet.

Compared: the chunkwise WY form against the float32 token loop, on outputs, final
state and the gradients of q, k, v, g, β and the initial state (random cotangents), for
lengths that are not multiples of the chunk, under strong gates (mean log-decay −2 and
−6) and over 500 tokens; and α = 1 against an independent DeltaNet loop.
"""

from __future__ import annotations

import torch

from kernels.check_inputs import linear_attention_inputs, recurrence_checks
from kernels.checks import Check, Outcome, Setting, Verification, compare_all, shape_id
from kernels.deltanet.naive import naive_recurrent_delta_rule
from kernels.gated_deltanet.chunk import chunk_gated_delta_rule
from kernels.gated_deltanet.naive import naive_recurrent_gated_delta_rule

#: (B, T, H, D, chunk): T is never a power of two nor a multiple of the chunk.
SHAPES = ((2, 37, 2, 16, 16), (1, 45, 3, 12, 32), (1, 70, 1, 8, 64))
NAMES = ("q", "k", "v", "g", "beta", "h0")


def _reference(x: dict[str, torch.Tensor], chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    return naive_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["h0"])


def _chunked(x: dict[str, torch.Tensor], chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    return chunk_gated_delta_rule(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["h0"], chunk_size=chunk)


def alpha_one_is_deltanet(s: Setting) -> Outcome:
    B, T, H, D, C = SHAPES[0]
    x = linear_attention_inputs(s, B, T, H, D, offset=60)
    zeros = torch.zeros_like(x["g"])
    o1, h1 = naive_recurrent_delta_rule(x["q"], x["k"], x["v"], x["beta"], initial_state=x["h0"])
    o2, h2 = _reference({**x, "g": zeros}, C)
    o3, h3 = _chunked({**x, "g": zeros}, C)
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
    "of q, k, v, g, beta and h0, also under strong gates and over 500 tokens; alpha = 1 against "
    "an independent DeltaNet loop",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=(
        *recurrence_checks("Gated DeltaNet", _reference, _chunked, NAMES, SHAPES),
        Check(
            "alpha-one-is-deltanet",
            "With alpha = 1 (g = 0) Gated DeltaNet is DeltaNet.",
            alpha_one_is_deltanet,
            tolerance=1e-5,
        ),
    ),
)
