"""Declared verification of full multi-head attention.

Compared: blockwise online-softmax attention against the row-by-row softmax, outputs
and gradients, with block sizes that do not divide the lengths (one query row past
two blocks), value heads wider than key heads and an explicit scale; both against
``torch.nn.functional.scaled_dot_product_attention``. Properties: rows of P sum to 1,
causality, scores of order 1e4 stay finite, and a KV cache of 2·h·d_h elements per token
per layer. The blockwise form claims a bfloat16 path (float32 accumulation).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from kernels.checks import Case, Verification, case, check, comparison
from kernels.families import BATCH_OF_ONE, EXTREME_LOGITS, K_NE_V, NON_DEFAULT_SCALE, UNEVEN_SIZES
from kernels.measures import Outcome, Setting, compare, compare_all, count, worst
from kernels.transformer.blockwise import blockwise_attention, decode
from kernels.transformer.naive import naive_attention, naive_probabilities

#: batch B, queries T, keys S (S > T: a prefill continuing a cache), heads H, key width
#: K, value width V, query and key block sizes bq, bk
CASES = (
    case(B=2, T=37, S=37, H=2, K=16, V=16, bq=16, bk=24),
    case(B=1, T=45, S=70, H=3, K=8, V=8, bq=32, bk=48),
    case(K_NE_V, B=1, T=7, S=7, H=4, K=8, V=4, bq=3, bk=5),
    case(
        UNEVEN_SIZES, K_NE_V, NON_DEFAULT_SCALE, BATCH_OF_ONE, B=1, T=33, S=33, H=2, K=8, V=12, bq=16, bk=16, scale=0.37
    ),
)


def _qkv(s: Setting, c: Case, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        s.randn(c.B, c.T, c.H, c.K, gen=gen),
        s.randn(c.B, c.S, c.H, c.K, gen=gen),
        s.randn(c.B, c.S, c.H, c.V, gen=gen),
    )


def _comparison(causal: bool) -> dict[str, object]:
    def naive(c: Case, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return naive_attention(q, k, v, causal=causal, scale=c.get("scale"))

    def blockwise(c: Case, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return blockwise_attention(q, k, v, causal=causal, scale=c.get("scale"), block_q=c.bq, block_k=c.bk)

    return {"reference": naive, "structured": blockwise, "draw": _qkv, "cases": CASES}


CAUSAL = comparison(
    "blockwise-vs-naive",
    "Causal blockwise attention with an online softmax equals the plain softmax attention, outputs and gradients.",
    **_comparison(True),  # type: ignore[arg-type]
    grads=("q", "k", "v"),
    tolerances={"bfloat16": 5e-3},
)
FULL = comparison(
    "blockwise-vs-naive-full",
    "Without the causal mask blockwise attention equals the plain softmax attention, outputs and gradients.",
    **_comparison(False),  # type: ignore[arg-type]
    grads=("q", "k", "v"),
    tolerances={"bfloat16": 5e-3},
    offset=50,
)


@check("sdpa", 1e-5)
def matches_sdpa(s: Setting) -> Outcome:
    """Both forms equal torch's scaled_dot_product_attention."""
    c = CASES[0]
    q, k, v = _qkv(s, c, s.generator(60))
    ref = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    ref = ref.transpose(1, 2)
    return compare_all(
        [
            ("naive", ref, naive_attention(q, k, v)),
            ("blockwise", ref, blockwise_attention(q, k, v, block_q=c.bq, block_k=c.bk)),
        ]
    )


@check("rows-sum-to-one", 1e-6, measure="abs")
def rows_sum_to_one(s: Setting) -> Outcome:
    """Every row of the attention matrix P sums to 1 (blockwise: its output for all-ones values)."""
    c = CASES[1]
    q, k, _ = _qkv(s, c, s.generator(70))
    ones = torch.ones_like(k)
    results = [compare(torch.ones_like(q), blockwise_attention(q, k, ones, block_q=c.bq, block_k=c.bk), "blockwise")]
    p = naive_probabilities(q, k, causal=True)
    results.append(compare(torch.ones_like(p[..., 0]), p.sum(-1), "naive P"))
    return worst(results, "row sums of P (blockwise: its output for v = 1) against 1")


@check("large-logits", 1e-5, covers=(EXTREME_LOGITS,))
def large_logits(s: Setting) -> Outcome:
    """With scores of order 1e4 (near float32's exp range) blockwise attention stays finite
    and equals attention computed in float64."""
    results = []
    for i, c in enumerate(CASES[:2]):
        q, k, v = _qkv(s, c, s.generator(100 + i))
        q, k = q * 60, k * 60
        causal = c.T == c.S
        ref = F.scaled_dot_product_attention(
            q.double().transpose(1, 2), k.double().transpose(1, 2), v.double().transpose(1, 2), is_causal=causal
        ).transpose(1, 2)
        out = blockwise_attention(q, k, v, causal=causal, block_q=c.bq, block_k=c.bk)
        results.append(compare(ref, out, f"{c.id} scores up to 1e4"))
    return worst(results)


@check("causality", 0.0, measure="abs")
def causal(s: Setting) -> Outcome:
    """A query's output does not depend on any later key or value."""
    c = CASES[0]
    q, k, v = _qkv(s, c, s.generator(80))
    cut = c.T // 2 + 1
    k2, v2 = k.clone(), v.clone()
    gen = s.generator(81)
    k2[:, cut:] = s.randn(c.B, c.S - cut, c.H, c.K, gen=gen)
    v2[:, cut:] = s.randn(c.B, c.S - cut, c.H, c.V, gen=gen)
    before = blockwise_attention(q, k, v, block_q=c.bq, block_k=c.bk)[:, :cut]
    after = blockwise_attention(q, k2, v2, block_q=c.bq, block_k=c.bk)[:, :cut]
    return compare(before, after, f"outputs before position {cut} when every later key and value change")


@check("kv-cache-per-token", 1e-5, measure="abs", covers=(K_NE_V,))
def cache_per_token(s: Setting) -> Outcome:
    """Decoding with a KV cache reproduces full attention and caches h·(d_k + d_v)
    elements per token per layer (2·h·d_h when keys and values are as wide)."""
    results = []
    for c in (case(B=1, T=37, S=37, H=3, K=16, V=16), case(K_NE_V, B=1, T=21, S=21, H=2, K=8, V=12)):
        q, k, v = _qkv(s, c, s.generator(90))
        out, cache = decode(q, k, v, block_k=8)
        per_token = sum(t.numel() for t in cache.values()) // (c.B * c.T)
        results.append(count(per_token, c.H * (c.K + c.V), f"{per_token} cached elements per token, {c.id}"))
        results.append(compare(naive_attention(q, k, v), out, f"decode vs full attention, {c.id}"))
    return worst(results)


VERIFICATION = Verification(
    "transformer", __doc__ or "", (CAUSAL, FULL, matches_sdpa, rows_sum_to_one, large_logits, causal, cache_per_token)
)
