"""Declared verification of grouped-query attention and the MHA → GQA conversion.

Compared: the grouped einsum against repeat_interleave + multi-head attention (query
head h·G + g reads KV head h), outputs and gradients; MQA and MHA as the two ends of
GQA. Properties: a converted checkpoint whose grouped heads were identical computes
exactly what the MHA model computed; the cache holds 2·Hkv·d_h elements per token.
"""

from __future__ import annotations

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare_all,
    compare_forms,
    count,
    shape_id,
    worst,
)
from kernels.gqa.grouped import grouped_attention, kv_cache_elements_per_token, mha_to_gqa
from kernels.gqa.naive import naive_gqa
from kernels.mqa.shared import mqa_attention
from kernels.transformer.naive import naive_attention

SHAPES = ((2, 37, 6, 2, 16), (1, 45, 8, 4, 8))  # B, T, H, Hkv, D


def grouped_matches_repeat(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, Hkv, D) in enumerate(SHAPES):
        gen = s.generator(i)
        q, k, v = (
            s.randn(B, T, H, D, gen=gen),
            s.randn(B, T, Hkv, D, gen=gen),
            s.randn(B, T, Hkv, D, gen=gen),
        )
        results.append(
            compare_forms(
                naive_gqa,
                grouped_attention,
                (q, k, v),
                (s.randn(B, T, H, D, gen=gen),),
                outputs=("o",),
                grads=("q", "k", "v"),
                tag=shape_id(B=B, T=T, H=H, Hkv=Hkv, D=D),
            )
        )
    return worst(results)


def ends_are_mqa_and_mha(s: Setting) -> Outcome:
    B, T, H, D = 1, 45, 4, 8
    gen = s.generator(10)
    q = s.randn(B, T, H, D, gen=gen)
    k1, v1 = s.randn(B, T, 1, D, gen=gen), s.randn(B, T, 1, D, gen=gen)
    kh, vh = s.randn(B, T, H, D, gen=gen), s.randn(B, T, H, D, gen=gen)
    return compare_all(
        [
            ("Hkv=1 vs MQA", mqa_attention(q, k1, v1), grouped_attention(q, k1, v1)),
            ("Hkv=H vs MHA", naive_attention(q, kh, vh), grouped_attention(q, kh, vh)),
        ]
    )


def conversion_of_identical_heads_is_exact(s: Setting) -> Outcome:
    B, T, H, Hkv, D = SHAPES[0]
    d_model = 20
    gen = s.generator(20)
    x = s.randn(B, T, d_model, gen=gen)
    w_q = s.randn(H * D, d_model, gen=gen, scale=d_model**-0.5)
    # An MHA checkpoint whose heads within each group are identical.
    base_k = s.randn(Hkv, 1, D, d_model, gen=gen, scale=d_model**-0.5)
    base_v = s.randn(Hkv, 1, D, d_model, gen=gen, scale=d_model**-0.5)
    w_k = base_k.expand(Hkv, H // Hkv, D, d_model).reshape(H * D, d_model)
    w_v = base_v.expand(Hkv, H // Hkv, D, d_model).reshape(H * D, d_model)
    q = (x @ w_q.T).reshape(B, T, H, D)
    mha = naive_attention(q, (x @ w_k.T).reshape(B, T, H, D), (x @ w_v.T).reshape(B, T, H, D))
    pk, pv = mha_to_gqa(w_k, w_v, H, Hkv)
    gqa = grouped_attention(q, (x @ pk.T).reshape(B, T, Hkv, D), (x @ pv.T).reshape(B, T, Hkv, D))
    # And pooling really is the mean of each group's heads.
    wk_random = s.randn(H * D, d_model, gen=gen)
    pooled, _ = mha_to_gqa(wk_random, wk_random, H, Hkv)
    mean = torch.stack(
        [wk_random.reshape(H, D, d_model)[g * (H // Hkv) : (g + 1) * (H // Hkv)].mean(0) for g in range(Hkv)]
    ).reshape(Hkv * D, d_model)
    return compare_all([("converted GQA vs MHA", mha, gqa), ("pooled vs group mean", mean, pooled)])


def cache_per_token(s: Setting) -> Outcome:
    results = []
    for _heads, Hkv, D in ((32, 8, 128), (6, 2, 16), (8, 1, 64)):
        results.append(
            count(
                kv_cache_elements_per_token(Hkv, D),
                2 * Hkv * D,
                f"Hkv={Hkv}, d_h={D}: {kv_cache_elements_per_token(Hkv, D)} elements per token",
            )
        )
    return worst(results)


VERIFICATION = Verification(
    technique="gqa",
    compares="grouped einsum against repeat_interleave plus multi-head attention (outputs and "
    "gradients); MHA to GQA conversion by mean-pooling the K/V heads of each group",
    shapes=tuple(shape_id(B=B, T=T, H=H, Hkv=Hkv, D=D) for B, T, H, Hkv, D in SHAPES),
    gradients=True,
    checks=(
        Check(
            "grouped-vs-repeat",
            "Grouped attention equals MHA on KV heads repeated per group "
            "(query head h·G + g reads KV head h), outputs and gradients.",
            grouped_matches_repeat,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "mqa-and-mha-are-the-ends",
            "GQA with one KV head is MQA; with H KV heads it is MHA.",
            ends_are_mqa_and_mha,
            tolerance=1e-5,
        ),
        Check(
            "mha-to-gqa-conversion",
            "Mean-pooling the K/V heads of each group converts an MHA "
            "checkpoint whose grouped heads are identical without changing its output.",
            conversion_of_identical_heads_is_exact,
            tolerance=1e-5,
        ),
        Check(
            "kv-cache-per-token",
            "The KV cache holds 2·Hkv·d_h elements per token per layer.",
            cache_per_token,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
