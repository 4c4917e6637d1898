"""Declared verification of multi-query attention: the broadcast form against the
per-head loop and against multi-head attention with the KV head duplicated; the KV
cache is 1/H of multi-head attention's."""

from __future__ import annotations

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    against,
    compare,
    compare_all,
    compare_forms,
    shape_id,
    worst,
)
from kernels.mqa.naive import naive_mqa
from kernels.mqa.shared import mqa_attention, mqa_decode
from kernels.transformer.naive import naive_attention

SHAPES = ((2, 37, 37, 4, 16), (1, 30, 55, 6, 8))  # B, T, S, H, D


def _inputs(s: Setting, B: int, T: int, S: int, H: int, D: int, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    return s.randn(B, T, H, D, gen=gen), s.randn(B, S, 1, D, gen=gen), s.randn(B, S, 1, D, gen=gen)


def broadcast_matches_loop(s: Setting) -> Outcome:
    results = []
    for i, (B, T, S, H, D) in enumerate(SHAPES):
        q, k, v = _inputs(s, B, T, S, H, D, i)
        results.append(
            compare_forms(
                naive_mqa,
                mqa_attention,
                (q, k, v),
                (s.randn(B, T, H, D, gen=s.generator(10 + i)),),
                outputs=("o",),
                grads=("q", "k", "v"),
                tag=shape_id(B=B, T=T, S=S, H=H, D=D),
            )
        )
    return worst(results)


def equals_mha_with_duplicated_kv(s: Setting) -> Outcome:
    B, T, S, H, D = SHAPES[0]
    q, k, v = _inputs(s, B, T, S, H, D, 20)
    mha = naive_attention(q, k.expand(B, S, H, D), v.expand(B, S, H, D))
    return compare_all([("mqa", mha, mqa_attention(q, k, v))])


def cache_ratio(s: Setting) -> Outcome:
    """Measured on the cache that decoding builds, against MHA's 2·H·d_h per token."""
    B, T, H, D = 1, 23, 6, 8
    q, k, v = _inputs(s, B, T, T, H, D, 30)
    out, cache = mqa_decode(q, k, v)
    per_token = sum(t.numel() for t in cache.values()) / (B * T)
    ratio = against(
        per_token / (2 * H * D),
        1 / H,
        f"decode cache {per_token:g} elements per token vs MHA's {2 * H * D} for H={H}: "
        f"ratio {per_token / (2 * H * D):.6g}, claimed 1/H",
    )
    steps = compare(mqa_attention(q, k, v), out, "decode vs full attention")
    return worst([ratio, steps], ratio.detail + f"; decode vs full attention max error {steps.max_abs:.2g}")


VERIFICATION = Verification(
    technique="mqa",
    compares="one KV head broadcast to all query heads against a per-head loop (outputs and "
    "gradients) and against multi-head attention on duplicated KV heads",
    shapes=tuple(shape_id(B=B, T=T, S=S, H=H, D=D) for B, T, S, H, D in SHAPES),
    gradients=True,
    checks=(
        Check(
            "broadcast-vs-loop",
            "The broadcast form equals the per-head loop, outputs and gradients.",
            broadcast_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "equals-mha-duplicated-kv",
            "MQA is multi-head attention whose KV heads are all the same head.",
            equals_mha_with_duplicated_kv,
            tolerance=1e-6,
        ),
        Check(
            "kv-cache-ratio",
            "Decoding with the single-head KV cache reproduces full attention, and the cache it "
            "builds is 1/H of multi-head attention's.",
            cache_ratio,
            tolerance=1e-6,
            measure="abs",
        ),
    ),
)
