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
from kernels.checks import Case, Verification, case, check, comparison
from kernels.families import BATCH_OF_ONE, FAR_FROM_UNIT, HUGE, TINY
from kernels.measures import Outcome, Setting, compare, compare_all, compare_forms, worst

B, T, D, L = 2, 13, 24, 6
#: sources n, batch B, tokens T, width d, source scale
CASES = (
    case(n=5, B=2, T=13, d=24, x=1.0),
    case(FAR_FROM_UNIT, BATCH_OF_ONE, n=3, B=1, T=7, d=16, x=TINY),
    case(FAR_FROM_UNIT, n=4, B=2, T=5, d=8, x=HUGE),
)


def _net(s: Setting, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    weights = s.randn(L, D, D, gen=gen, scale=D**-0.5)
    queries = s.randn(L + 1, D, gen=gen)
    norm = 1 + 0.1 * s.randn(D, gen=gen)
    x = s.randn(B, T, D, gen=gen)
    return x, weights, queries, norm


def _layers(weights: torch.Tensor) -> list:  # type: ignore[type-arg]
    return [lambda h, w=w: torch.tanh(h @ w) for w in weights]


def _sources(s: Setting, c: Case, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    return s.randn(c.n, c.B, c.T, c.d, gen=gen, scale=c.x), s.randn(c.d, gen=gen), 1 + 0.1 * s.randn(c.d, gen=gen)


STACKED = comparison(
    "stacked-vs-loop",
    "The stacked form equals the loop over sources, outputs and gradients, also for sources of norm 1e-4 "
    "(where the RMSNorm's epsilon matters) and 1e4.",
    lambda c, v, q, n: naive_attnres(list(v), q, n),
    lambda c, v, q, n: attnres(v, q, n),
    _sources,
    CASES,
    grads=("sources", "query", "norm"),
    tolerances={"float16": 0.005},  # FLA tests AttnRes in fp16 and fp32 only
)


@check("network-full-and-block", 1e-5, gradients=True)
def networks_match(s: Setting) -> Outcome:
    """The fused full and block wirings (blocks of 4 and 3 over 6 layers) equal networks
    whose sources are spelled out layer by layer, outputs and gradients."""
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


@check("zero-query-is-mean", 1e-6)
def zero_query_is_mean(s: Setting) -> Outcome:
    """A zero query weights every source equally: the mean of the sources."""
    sources = s.randn(4, B, T, D, gen=s.generator(3))
    zero = torch.zeros(D, device=s.device, dtype=s.dtype)
    return compare_all(
        [
            ("stacked", sources.mean(0), attnres(sources, zero, torch.ones_like(zero))),
            ("loop", sources.mean(0), naive_attnres(list(sources), zero, torch.ones_like(zero))),
        ]
    )


@check("single-source-is-identity", 0.0, measure="abs")
def single_source_is_identity(s: Setting) -> Outcome:
    """With one source (L = 1) the output is that source."""
    gen = s.generator(4)
    v, q = s.randn(1, B, T, D, gen=gen), s.randn(D, gen=gen)
    return compare(v[0], attnres(v, q, torch.ones_like(q)), "one source in, the same source out")


@check("block-of-one-is-full", 1e-6)
def block_of_one_is_full(s: Setting) -> Outcome:
    """Blocks of one layer give the full variant."""
    x, weights, queries, norm = _net(s, 5)
    return compare(
        full_forward(x, _layers(weights), queries, norm),
        block_forward(x, _layers(weights), queries, norm, block=1),
    )


VERIFICATION = Verification(
    "attention-residuals",
    __doc__ or "",
    (STACKED, networks_match, zero_query_is_mean, single_source_is_identity, block_of_one_is_full),
    shapes=(*(c.id for c in CASES), f"network B{B}-T{T}-D{D}-L{L}", "blocks of 4, 3 and 1"),
)
