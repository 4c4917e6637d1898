"""Declared verification of grouped-query attention and the MHA → GQA conversion.

Compared: the grouped einsum against repeat_interleave + multi-head attention (query
head h·G + g reads KV head h), outputs and gradients, also with value heads wider than
key heads and an explicit scale; MQA and MHA as the two ends of GQA. Properties: a
converted checkpoint whose grouped heads were identical computes exactly what the MHA
model computed; the cache holds 2·Hkv·d_h elements per token (worked out here).
"""

from __future__ import annotations

from functools import partial

import torch

from kernels.checks import Case, Verification, case, check, comparison
from kernels.families import BATCH_OF_ONE, K_NE_V, NON_DEFAULT_SCALE
from kernels.gqa.grouped import grouped_attention, kv_cache_elements_per_token, mha_to_gqa
from kernels.gqa.naive import naive_gqa
from kernels.measures import Outcome, Setting, compare, compare_all, count, numbers_first, worst
from kernels.mqa.shared import mqa_attention
from kernels.transformer.naive import naive_attention

#: batch B, length T, query heads H, KV heads Hkv, key width K, value width V
CASES = (
    case(B=2, T=37, H=6, Hkv=2, K=16, V=16),
    case(B=1, T=45, H=8, Hkv=4, K=8, V=8),
    case(K_NE_V, NON_DEFAULT_SCALE, BATCH_OF_ONE, B=1, T=29, H=6, Hkv=3, K=8, V=12, scale=0.37),
)


def _qkv(s: Setting, c: Case, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        s.randn(c.B, c.T, c.H, c.K, gen=gen),
        s.randn(c.B, c.T, c.Hkv, c.K, gen=gen),
        s.randn(c.B, c.T, c.Hkv, c.V, gen=gen),
    )


GROUPED = comparison(
    "grouped-vs-repeat",
    "Grouped attention equals MHA on KV heads repeated per group (query head h·G + g reads KV head h), "
    "outputs and gradients.",
    lambda c, q, k, v: naive_gqa(q, k, v, scale=c.get("scale")),
    lambda c, q, k, v: grouped_attention(q, k, v, scale=c.get("scale")),
    _qkv,
    CASES,
    grads=("q", "k", "v"),
    tolerances={"bfloat16": 5e-3},
)


@check("mqa-and-mha-are-the-ends", 1e-5)
def ends_are_mqa_and_mha(s: Setting) -> Outcome:
    """GQA with one KV head is MQA; with H KV heads it is MHA."""
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


def _conversion(s: Setting, c: Case) -> Outcome:
    """An MHA checkpoint whose heads within each group are identical, converted."""
    B, T, H, Hkv, K, V, d_model = c.B, c.T, c.H, c.Hkv, c.K, c.V, 20
    gen = s.generator(20)
    x = s.randn(B, T, d_model, gen=gen)
    w_q = s.randn(H * K, d_model, gen=gen, scale=d_model**-0.5)
    base_k = s.randn(Hkv, 1, K, d_model, gen=gen, scale=d_model**-0.5)
    base_v = s.randn(Hkv, 1, V, d_model, gen=gen, scale=d_model**-0.5)
    w_k = base_k.expand(Hkv, H // Hkv, K, d_model).reshape(H * K, d_model)
    w_v = base_v.expand(Hkv, H // Hkv, V, d_model).reshape(H * V, d_model)
    q = (x @ w_q.T).reshape(B, T, H, K)
    mha = naive_attention(q, (x @ w_k.T).reshape(B, T, H, K), (x @ w_v.T).reshape(B, T, H, V))
    pk, pv = mha_to_gqa(w_k, w_v, H, Hkv)
    gqa = grouped_attention(q, (x @ pk.T).reshape(B, T, Hkv, K), (x @ pv.T).reshape(B, T, Hkv, V))
    return compare(mha, gqa, f"converted GQA vs MHA {c.id}")


def _pooling(s: Setting, c: Case) -> Outcome:
    """Pooling is the mean of each group's heads, for keys and values of their own widths."""
    H, Hkv, G, d_model = c.H, c.Hkv, c.H // c.Hkv, 20
    gen = s.generator(21)
    w_k, w_v = s.randn(H * c.K, d_model, gen=gen), s.randn(H * c.V, d_model, gen=gen)
    pooled_k, pooled_v = mha_to_gqa(w_k, w_v, H, Hkv)
    pairs = []
    for name, w, D, pooled in (("K", w_k, c.K, pooled_k), ("V", w_v, c.V, pooled_v)):
        mean = torch.stack([w.view(H, D, d_model)[g * G : (g + 1) * G].mean(0) for g in range(Hkv)])
        pairs.append((f"pooled {name} vs group mean {c.id}", mean.reshape(Hkv * D, d_model), pooled))
    return compare_all(pairs)


@check("mha-to-gqa-conversion", 1e-5, covers=(K_NE_V,))
def conversion_of_identical_heads_is_exact(s: Setting) -> Outcome:
    """Mean-pooling the K/V heads of each group converts an MHA checkpoint whose grouped
    heads are identical without changing its output, also with value heads wider than key
    heads; pooling is the mean of each group's heads."""
    parts = [partial(f, s, c) for c in CASES[::2] for f in (_pooling, _conversion)]
    return numbers_first(parts, 1e-5)


@check("kv-cache-per-token", 0.0, measure="abs")
def cache_per_token(s: Setting) -> Outcome:
    """The KV cache holds 2·Hkv·d_h elements per token per layer."""
    results = []
    for Hkv, D in ((8, 128), (2, 16), (1, 64), (3, 12)):
        got = kv_cache_elements_per_token(Hkv, D)
        results.append(count(got, 2 * Hkv * D, f"Hkv={Hkv}, d_h={D}: {got} elements per token"))
    return worst(results)


VERIFICATION = Verification(
    "gqa", __doc__ or "", (GROUPED, ends_are_mqa_and_mha, conversion_of_identical_heads_is_exact, cache_per_token)
)
