"""Declared verification of multi-query attention: the broadcast form against the
per-head loop and against multi-head attention with the KV head duplicated, also with
a value head wider than the key head; the KV cache is 1/H of multi-head attention's."""

from __future__ import annotations

import torch

from kernels.checks import Case, Verification, case, check, comparison
from kernels.families import BATCH_OF_ONE, K_NE_V
from kernels.measures import Outcome, Setting, against, compare, compare_all, worst
from kernels.mqa.naive import naive_mqa
from kernels.mqa.shared import mqa_attention, mqa_decode
from kernels.transformer.naive import naive_attention

#: batch B, queries T, keys S, query heads H, key width K, value width V
CASES = (
    case(B=2, T=37, S=37, H=4, K=16, V=16),
    case(B=1, T=30, S=55, H=6, K=8, V=8),
    case(K_NE_V, BATCH_OF_ONE, B=1, T=23, S=23, H=3, K=8, V=12),
)


def _qkv(s: Setting, c: Case, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return s.randn(c.B, c.T, c.H, c.K, gen=gen), s.randn(c.B, c.S, 1, c.K, gen=gen), s.randn(c.B, c.S, 1, c.V, gen=gen)


BROADCAST = comparison(
    "broadcast-vs-loop",
    "The broadcast form equals the per-head loop, outputs and gradients.",
    lambda c, q, k, v: naive_mqa(q, k, v),
    lambda c, q, k, v: mqa_attention(q, k, v),
    _qkv,
    CASES,
    grads=("q", "k", "v"),
    tolerances={"bfloat16": 5e-3},
)


@check("equals-mha-duplicated-kv", 1e-6, covers=(K_NE_V,))
def equals_mha_with_duplicated_kv(s: Setting) -> Outcome:
    """MQA is multi-head attention whose KV heads are all the same head."""
    pairs = []
    for c in CASES[::2]:
        q, k, v = _qkv(s, c, s.generator(20))
        mha = naive_attention(q, k.expand(c.B, c.S, c.H, c.K), v.expand(c.B, c.S, c.H, c.V))
        pairs.append((f"mqa {c.id}", mha, mqa_attention(q, k, v)))
    return compare_all(pairs)


@check("kv-cache-ratio", 1e-6, measure="abs")
def cache_ratio(s: Setting) -> Outcome:
    """Decoding with the single-head KV cache reproduces full attention, and the cache it
    builds is 1/H of multi-head attention's."""
    c = case(B=1, T=23, S=23, H=6, K=8, V=8)
    q, k, v = _qkv(s, c, s.generator(30))
    out, cache = mqa_decode(q, k, v)
    per_token = sum(t.numel() for t in cache.values()) / (c.B * c.T)
    mha = 2 * c.H * c.K
    ratio = against(per_token / mha, 1 / c.H, f"decode cache {per_token:g} elements per token vs MHA's {mha}")
    steps = compare(mqa_attention(q, k, v), out, "decode vs full attention")
    return worst([ratio, steps], ratio.detail + f"; decode vs full attention max error {steps.max_abs:.2g}")


VERIFICATION = Verification("mqa", __doc__ or "", (BROADCAST, equals_mha_with_duplicated_kv, cache_ratio))
