"""Declared verification of DeepSeek Sparse Attention.

Compared: the batched indexer + top-k mask + attention against a per-query loop,
outputs and gradients of q, k, v. Properties: with k ≥ T it is dense causal attention;
every query keeps exactly min(k, t + 1) keys.
"""

from __future__ import annotations

import torch

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
from kernels.dsa.naive import naive_dsa
from kernels.dsa.sparse import dsa_attention
from kernels.transformer.naive import naive_attention

SHAPES = ((2, 45, 2, 16, 4, 8, 12), (1, 75, 3, 8, 8, 16, 20))  # B, T, H, D, HI, dI, topk
#: q, k, v, q_idx, w_idx, k_idx
Inputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


def _inputs(s: Setting, B: int, T: int, H: int, D: int, HI: int, dI: int, offset: int) -> Inputs:
    gen = s.generator(offset)
    return (
        s.randn(B, T, H, D, gen=gen),
        s.randn(B, T, H, D, gen=gen),
        s.randn(B, T, H, D, gen=gen),
        s.randn(B, T, HI, dI, gen=gen),
        s.randn(B, T, HI, gen=gen),
        s.randn(B, T, dI, gen=gen),
    )


def batched_matches_loop(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, HI, dI, k) in enumerate(SHAPES):
        x = _inputs(s, B, T, H, D, HI, dI, i)
        results.append(
            compare_forms(
                lambda q, kk, v, k=k, r=x[3:]: naive_dsa(q, kk, v, r[0], r[1], r[2], k),
                lambda q, kk, v, k=k, r=x[3:]: dsa_attention(q, kk, v, r[0], r[1], r[2], k)[0],
                x[:3],
                (s.randn(B, T, H, D, gen=s.generator(10 + i)),),
                outputs=("o",),
                grads=("q", "k", "v"),
                tag=shape_id(B=B, T=T, H=H, D=D, k=k),
            )
        )
    return worst(results)


def dense_when_k_covers_all(s: Setting) -> Outcome:
    B, T, H, D, HI, dI, _ = SHAPES[1]
    x = _inputs(s, B, T, H, D, HI, dI, 20)
    dense = naive_attention(*x[:3], causal=True)
    return compare_all([(f"k={k}", dense, dsa_attention(*x, k)[0]) for k in (T, T + 13)])


def keys_per_query(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, HI, dI, k) in enumerate(SHAPES):
        _, mask = dsa_attention(*_inputs(s, B, T, H, D, HI, dI, 30 + i), k)
        expected = torch.minimum(torch.full((T,), k), torch.arange(1, T + 1)).to(mask.device)
        kept = mask.sum(-1)
        results.append(compare(expected.expand_as(kept).float(), kept.float(), f"k={k}"))
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=mask.device), 1)
        results.append(count(int((mask & causal).sum()), 0, "selected future keys"))
    return worst(results, "every query keeps min(k, t+1) keys and no future key")


VERIFICATION = Verification(
    technique="dsa",
    compares="batched lightning indexer + top-k mask + masked attention against a per-query loop "
    "(outputs and gradients of q, k, v)",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, HI=HI, dI=dI, k=k) for B, T, H, D, HI, dI, k in SHAPES),
    gradients=True,
    checks=(
        Check(
            "batched-vs-loop",
            "Indexer, top-k and masked attention in one pass equal the per-query loop, outputs and gradients.",
            batched_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "dense-when-k-ge-T",
            "With k >= T sparse attention is dense causal attention.",
            dense_when_k_covers_all,
            tolerance=1e-5,
        ),
        Check(
            "keys-per-query",
            "Each query attends to exactly min(k, t+1) keys, none in the future.",
            keys_per_query,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
