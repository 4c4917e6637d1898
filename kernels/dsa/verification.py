"""Declared verification of DeepSeek Sparse Attention.

Compared: the batched indexer + top-k mask + attention against a per-query loop,
outputs and gradients of q, k, v (also with value heads wider than key heads and a
batch of one). Properties: with k ≥ T it is dense causal attention; every query keeps
exactly min(k, t + 1) keys, counted here from the formula.
"""

from __future__ import annotations

import torch

from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.dsa.naive import naive_dsa
from kernels.dsa.sparse import dsa_attention
from kernels.families import BATCH_OF_ONE, K_NE_V
from kernels.measures import Outcome, Setting, compare, compare_all, count, worst
from kernels.transformer.naive import naive_attention

#: batch B, length T, heads H, key width K, value width V, indexer heads HI and width dI, top-k
CASES = (
    case(B=2, T=45, H=2, K=16, V=16, HI=4, dI=8, topk=12),
    case(B=1, T=75, H=3, K=8, V=8, HI=8, dI=16, topk=20),
    case(K_NE_V, BATCH_OF_ONE, B=1, T=33, H=2, K=8, V=12, HI=4, dI=8, topk=7),
)


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    q, k = s.randn(c.B, c.T, c.H, c.K, gen=gen), s.randn(c.B, c.T, c.H, c.K, gen=gen)
    v = s.randn(c.B, c.T, c.H, c.V, gen=gen)
    indexer = (
        s.randn(c.B, c.T, c.HI, c.dI, gen=gen),
        s.randn(c.B, c.T, c.HI, gen=gen),
        s.randn(c.B, c.T, c.dI, gen=gen),
    )
    return Drawn((q, k, v), context=(*indexer, c.topk))


BATCHED = comparison(
    "batched-vs-loop",
    "Indexer, top-k and masked attention in one pass equal the per-query loop, outputs and gradients.",
    lambda idx, q, k, v: naive_dsa(q, k, v, *idx),
    lambda idx, q, k, v: dsa_attention(q, k, v, *idx)[0],
    _draw,
    CASES,
    grads=("q", "k", "v"),
)


@check("dense-when-k-ge-T", 1e-5)
def dense_when_k_covers_all(s: Setting) -> Outcome:
    """With k >= T sparse attention is dense causal attention."""
    c = CASES[1]
    drawn = _draw(s, c, s.generator(20))
    q, k, v = drawn.inputs
    dense = naive_attention(q, k, v, causal=True)
    q_idx, w_idx, k_idx, _ = drawn.context
    pairs = [(f"k={top}", dense, dsa_attention(q, k, v, q_idx, w_idx, k_idx, top)[0]) for top in (c.T, c.T + 13)]
    return compare_all(pairs)


@check("keys-per-query", 0.0, measure="abs", covers=(BATCH_OF_ONE,))
def keys_per_query(s: Setting) -> Outcome:
    """Each query attends to exactly min(k, t+1) keys, none in the future."""
    results = []
    for i, c in enumerate(CASES):
        drawn = _draw(s, c, s.generator(30 + i))
        q, k, v = drawn.inputs
        _, mask = dsa_attention(q, k, v, *drawn.context)
        expected = torch.tensor([min(c.topk, t + 1) for t in range(c.T)], dtype=torch.float64)
        results.append(compare(expected.expand(c.B, c.T), mask.sum(-1).double().cpu(), f"{c.id}: keys per query"))
        causal = torch.triu(torch.ones(c.T, c.T, dtype=torch.bool, device=mask.device), 1)
        results.append(count(int((mask & causal).sum()), 0, f"{c.id}: selected future keys"))
    return worst(results, "every query keeps min(k, t+1) keys and no future key")


VERIFICATION = Verification("dsa", __doc__ or "", (BATCHED, dense_when_k_covers_all, keys_per_query))
