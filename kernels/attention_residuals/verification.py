"""Declared verification of Attention Residuals.

Compared: the stacked softmax-over-depth against the source-by-source loop, alone and
wired through a small network (full and block variants), outputs and gradients.
Properties: a zero query gives the mean of the sources; one source is passed through
unchanged; blocks of one layer are the full variant.
"""

from __future__ import annotations

import torch

from kernels.attention_residuals.fused import attnres, block_forward, full_forward
from kernels.attention_residuals.naive import naive_attnres, naive_network
from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare,
    compare_all,
    compare_forms,
    worst,
)

B, T, D, L = 2, 13, 24, 6


def _net(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    weights = s.randn(L, D, D, gen=gen, scale=D**-0.5)
    queries = s.randn(L + 1, D, gen=gen)
    norm = 1 + 0.1 * s.randn(D, gen=gen)
    x = s.randn(B, T, D, gen=gen)
    return x, weights, queries, norm


def _layers(weights: torch.Tensor) -> list:  # type: ignore[type-arg]
    return [lambda h, w=w: torch.tanh(h @ w) for w in weights]


def stacked_matches_loop(s: Setting) -> Outcome:
    gen = s.generator(0)
    sources = s.randn(5, B, T, D, gen=gen)
    query, norm = s.randn(D, gen=gen), 1 + 0.1 * s.randn(D, gen=gen)
    cot = (s.randn(B, T, D, gen=gen),)
    return compare_forms(
        lambda v, q, n: naive_attnres(list(v), q, n),
        attnres,
        (sources, query, norm),
        cot,
        grads=("sources", "query", "norm"),
    )


def networks_match(s: Setting) -> Outcome:
    """The fused wirings against networks whose sources are spelled out layer by layer."""
    x, weights, queries, norm = _net(s, 1)
    cot = (s.randn(B, T, D, gen=s.generator(2)),)
    results = []
    for block in (None, 4, 3):
        name = "full" if block is None else f"block {block}"

        def ref(x, w, q, n, block=block):  # type: ignore[no-untyped-def]
            return naive_network(x, _layers(w), q, n, block)

        def fused(x, w, q, n, block=block):  # type: ignore[no-untyped-def]
            if block is None:
                return full_forward(x, _layers(w), q, n)
            return block_forward(x, _layers(w), q, n, block)

        results.append(
            compare_forms(
                ref, fused, (x, weights, queries, norm), cot, grads=("x", "weights", "queries", "norm"), tag=name
            )
        )
    return worst(results)


def zero_query_is_mean(s: Setting) -> Outcome:
    sources = s.randn(4, B, T, D, gen=s.generator(3))
    zero = torch.zeros(D, device=s.device, dtype=s.dtype)
    return compare_all(
        [
            ("stacked", sources.mean(0), attnres(sources, zero, torch.ones_like(zero))),
            ("loop", sources.mean(0), naive_attnres(list(sources), zero, torch.ones_like(zero))),
        ]
    )


def single_source_is_identity(s: Setting) -> Outcome:
    gen = s.generator(4)
    v, q = s.randn(1, B, T, D, gen=gen), s.randn(D, gen=gen)
    return compare(v[0], attnres(v, q, torch.ones_like(q)), "one source in, the same source out")


def block_of_one_is_full(s: Setting) -> Outcome:
    x, weights, queries, norm = _net(s, 5)
    return compare(
        full_forward(x, _layers(weights), queries, norm),
        block_forward(x, _layers(weights), queries, norm, block=1),
    )


VERIFICATION = Verification(
    technique="attention-residuals",
    compares="stacked softmax over depth against a source-by-source loop, alone and in a 6-layer "
    "network with the full and block wirings against networks spelled out layer by layer: outputs and "
    "gradients",
    shapes=(f"B{B}-T{T}-D{D}-L{L}", "5 sources", "blocks of 4 and of 1"),
    gradients=True,
    checks=(
        Check(
            "stacked-vs-loop",
            "The stacked form equals the loop over sources, outputs and gradients.",
            stacked_matches_loop,
            tolerance=1e-5,
            gradients=True,
            tolerances={"float16": 0.005},  # FLA tests AttnRes in fp16 and fp32 only
        ),
        Check(
            "network-full-and-block",
            "The fused full and block wirings (blocks of 4 and 3 over 6 layers) equal networks whose "
            "sources are spelled out layer by layer, outputs and gradients.",
            networks_match,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "zero-query-is-mean",
            "A zero query weights every source equally: the mean of the sources.",
            zero_query_is_mean,
            tolerance=1e-6,
        ),
        Check(
            "single-source-is-identity",
            "With one source (L = 1) the output is that source.",
            single_source_is_identity,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "block-of-one-is-full",
            "Blocks of one layer give the full variant.",
            block_of_one_is_full,
            tolerance=1e-6,
        ),
    ),
)
