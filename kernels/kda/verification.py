"""Declared verification of Kimi Delta Attention (channel-wise decay).

Compared: the chunkwise form (with sub-chunked decays) against the float32 token loop,
on outputs, final state and gradients (random cotangents), under strong gates (mean
log-decay −2 and −6) and over 500 tokens; and the reduction to Gated DeltaNet when
every channel of a head shares one gate.
"""

from __future__ import annotations

import torch

from kernels.check_inputs import linear_attention_inputs, recurrence_checks
from kernels.checks import Check, Outcome, Setting, Verification, compare_all, shape_id
from kernels.gated_deltanet.chunk import chunk_gated_delta_rule
from kernels.gated_deltanet.naive import naive_recurrent_gated_delta_rule
from kernels.kda.chunk import chunk_kda
from kernels.kda.naive import naive_recurrent_kda

#: (B, T, H, D, chunk); the sub-chunk is a quarter of the chunk.
SHAPES = ((2, 37, 2, 16, 16), (1, 45, 3, 12, 32), (1, 70, 1, 8, 64))
NAMES = ("q", "k", "v", "g", "beta", "h0")


def _reference(x: dict[str, torch.Tensor], chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    return naive_recurrent_kda(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["h0"])


def _chunked(x: dict[str, torch.Tensor], chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    return chunk_kda(
        x["q"],
        x["k"],
        x["v"],
        x["g"],
        x["beta"],
        initial_state=x["h0"],
        chunk_size=chunk,
        sub_chunk=chunk // 4,
    )


def equal_gates_reduce_to_gdn(s: Setting) -> Outcome:
    B, T, H, D, C = SHAPES[0]
    x = linear_attention_inputs(s, B, T, H, D, offset=60)  # one gate per head
    wide = {**x, "g": x["g"][..., None].expand(B, T, H, D)}
    args = (x["q"], x["k"], x["v"])
    o1, h1 = naive_recurrent_gated_delta_rule(*args, x["g"], x["beta"], initial_state=x["h0"])
    o2, h2 = _reference(wide, C)
    o3, h3 = chunk_gated_delta_rule(*args, x["g"], x["beta"], initial_state=x["h0"], chunk_size=C)
    o4, h4 = _chunked(wide, C)
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
    "outputs, final state and gradients, also under strong gates and over 500 tokens; equal gates "
    "across channels against Gated DeltaNet",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C, S=C // 4) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=(
        *recurrence_checks("KDA", _reference, _chunked, NAMES, SHAPES, channel_gates=True),
        Check(
            "equal-gates-is-gdn",
            "When the gates are equal across channels KDA reduces to Gated DeltaNet (recurrent and chunkwise).",
            equal_gates_reduce_to_gdn,
            tolerance=1e-5,
        ),
    ),
)
