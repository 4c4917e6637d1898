"""Declared verification of full multi-head attention.

Compared: blockwise online-softmax attention against the row-by-row softmax, outputs
and gradients, with block sizes that do not divide the lengths; both against
``torch.nn.functional.scaled_dot_product_attention``. Properties: rows of P sum to 1,
causality, and a KV cache of 2·h·d_h elements per token per layer.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare,
    compare_all,
    compare_forms,
    count,
    shape_id,
    worst,
)
from kernels.transformer.blockwise import blockwise_attention, decode
from kernels.transformer.naive import naive_attention, naive_probabilities

#: (B, T, S, H, D, block_q, block_k); S > T is a prefill continuing a cache.
SHAPES = ((2, 37, 37, 2, 16, 16, 24), (1, 45, 70, 3, 8, 32, 48), (1, 7, 7, 4, 8, 3, 5))


def _qkv(s: Setting, B: int, T: int, S: int, H: int, D: int, offset: int = 0):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    return s.randn(B, T, H, D, gen=gen), s.randn(B, S, H, D, gen=gen), s.randn(B, S, H, D, gen=gen)


def blockwise_matches_naive(s: Setting) -> Outcome:
    results = []
    for i, (B, T, S, H, D, bq, bk) in enumerate(SHAPES):
        q, k, v = _qkv(s, B, T, S, H, D, i)
        cot = s.randn(B, T, H, D, gen=s.generator(50 + i))
        for causal in (True, False):
            results.append(
                compare_forms(
                    lambda q, k, v, c=causal: naive_attention(q, k, v, causal=c),
                    lambda q, k, v, c=causal, bq=bq, bk=bk: blockwise_attention(
                        q, k, v, causal=c, block_q=bq, block_k=bk
                    ),
                    (q, k, v),
                    (cot,),
                    outputs=("o",),
                    grads=("q", "k", "v"),
                    tag=shape_id(B=B, T=T, S=S, H=H, D=D) + (" causal" if causal else ""),
                )
            )
    return worst(results)


def matches_sdpa(s: Setting) -> Outcome:
    B, T, S, H, D, bq, bk = SHAPES[0]
    q, k, v = _qkv(s, B, T, S, H, D, 60)
    ref = F.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
    ).transpose(1, 2)
    return compare_all(
        [
            ("naive", ref, naive_attention(q, k, v)),
            ("blockwise", ref, blockwise_attention(q, k, v, block_q=bq, block_k=bk)),
        ]
    )


def rows_sum_to_one(s: Setting) -> Outcome:
    """Measured on the blockwise form: with every value 1 its output is Σ_j P_ij."""
    B, T, S, H, D, bq, bk = SHAPES[1]
    q, k, _ = _qkv(s, B, T, S, H, D, 70)
    ones = torch.ones_like(k)
    results = [compare(torch.ones_like(q), blockwise_attention(q, k, ones, block_q=bq, block_k=bk), "blockwise")]
    p = naive_probabilities(q, k, causal=True)
    results.append(compare(torch.ones_like(p[..., 0]), p.sum(-1), "naive P"))
    return worst(results, "row sums of P (blockwise: its output for v = 1) against 1")


def large_logits(s: Setting) -> Outcome:
    """Scores of order ±10⁴: e^s overflows float32 unless the running maximum is subtracted."""
    results = []
    for i, (B, T, S, H, D, bq, bk) in enumerate(SHAPES[:2]):
        q, k, v = _qkv(s, B, T, S, H, D, 100 + i)
        q, k = q * 60, k * 60
        ref = F.scaled_dot_product_attention(
            q.double().transpose(1, 2), k.double().transpose(1, 2), v.double().transpose(1, 2), is_causal=T == S
        ).transpose(1, 2)
        out = blockwise_attention(q, k, v, causal=T == S, block_q=bq, block_k=bk)
        results.append(compare(ref, out, shape_id(B=B, T=T, S=S) + " scores up to 1e4"))
    return worst(results)


def causal(s: Setting) -> Outcome:
    B, T, S, H, D, bq, bk = SHAPES[0]
    q, k, v = _qkv(s, B, T, S, H, D, 80)
    cut = T // 2 + 1
    k2, v2 = k.clone(), v.clone()
    gen = s.generator(81)
    k2[:, cut:] = s.randn(B, S - cut, H, D, gen=gen)
    v2[:, cut:] = s.randn(B, S - cut, H, D, gen=gen)
    before = blockwise_attention(q, k, v, block_q=bq, block_k=bk)[:, :cut]
    after = blockwise_attention(q, k2, v2, block_q=bq, block_k=bk)[:, :cut]
    return compare(before, after, f"outputs before position {cut} when every later key and value change")


def cache_per_token(s: Setting) -> Outcome:
    B, T, H, D = 1, 37, 3, 16
    q, k, v = _qkv(s, B, T, T, H, D, 90)
    out, cache = decode(q, k, v, block_k=8)
    per_token = sum(t.numel() for t in cache.values()) // (B * T)
    steps = compare(naive_attention(q, k, v), out)
    counted = count(per_token, 2 * H * D, f"{per_token} cached elements per token for h={H}, d_h={D}")
    return Outcome(
        max(counted.max_abs, steps.max_abs),
        max(counted.max_rel, steps.max_rel),
        counted.detail + f"; decode vs full attention max error {steps.max_abs:.2g}",
    )


VERIFICATION = Verification(
    technique="transformer",
    compares="blockwise online-softmax attention against the row-by-row softmax (outputs and "
    "gradients of q, k, v, causal and not) and against torch SDPA",
    shapes=tuple(shape_id(B=B, T=T, S=S, H=H, D=D, Bq=bq, Bk=bk) for B, T, S, H, D, bq, bk in SHAPES),
    gradients=True,
    checks=(
        Check(
            "blockwise-vs-naive",
            "Blockwise attention with an online softmax equals the plain softmax attention, outputs and gradients.",
            blockwise_matches_naive,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "sdpa",
            "Both forms equal torch's scaled_dot_product_attention.",
            matches_sdpa,
            tolerance=1e-5,
        ),
        Check(
            "rows-sum-to-one",
            "Every row of the attention matrix P sums to 1 (blockwise: its output for all-ones values).",
            rows_sum_to_one,
            tolerance=1e-6,
            measure="abs",
        ),
        Check(
            "large-logits",
            "With scores of order 1e4 (near float32's exp range) blockwise attention stays finite "
            "and equals attention computed in float64.",
            large_logits,
            tolerance=1e-5,
        ),
        Check(
            "causality",
            "A query's output does not depend on any later key or value.",
            causal,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "kv-cache-per-token",
            "Decoding with a KV cache reproduces full attention and caches 2·h·d_h elements per token per layer.",
            cache_per_token,
            tolerance=1e-5,
            measure="abs",
        ),
    ),
)
