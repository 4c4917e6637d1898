"""Declared verification of DeepSeek-V4's compressed attention (CSA and HCA).

Compared: one-shot pooling (unfolded windows) against a per-window loop written from
the formula and against a streaming cache fed one token at a time, for CSA (width 2m,
stride m) and HCA (disjoint windows of m′), with gradients; also for lengths one token
past a window, a batch of one, and hidden states of order 1e-4 (where the RMSNorm's
epsilon matters). Properties: ⌊T/m⌋ entries; the RoPE channels of entry i are rotated at
position i·m; attention over the top-k entries equals dense attention over the complete
entries when k covers them all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial

import torch

from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.csa_hca.config import Compressor, init_compressor
from kernels.csa_hca.naive import naive_compress
from kernels.csa_hca.pool import StreamingCompressor, attend_compressed, compress, entries
from kernels.families import BATCH_OF_ONE, FAR_FROM_UNIT, TINY, UNEVEN_SIZES
from kernels.formulas import rotate_pairs
from kernels.measures import Outcome, Setting, compare, compare_all, count, numbers_first, worst

D, DC, ROPE = 20, 12, 4
#: stride m (overlapping windows of 2m for CSA, disjoint for HCA), batch B, tokens T, input scale
CASES = (
    case(m=4, overlap=True, B=2, T=45, x=1.0),
    case(m=16, overlap=False, B=2, T=75, x=1.0),
    case(UNEVEN_SIZES, BATCH_OF_ONE, m=3, overlap=True, B=1, T=31, x=1.0),
    case(FAR_FROM_UNIT, UNEVEN_SIZES, m=4, overlap=False, B=2, T=33, x=TINY),
)


def _compressor(s: Setting, c: Case, gen: torch.Generator, rope: int = ROPE) -> Compressor:
    return init_compressor(D, DC, c.m, c.overlap, gen, rope=rope, device=s.device, dtype=s.dtype)


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    comp = _compressor(s, c, gen)
    h = s.randn(c.B, c.T, D, gen=gen, scale=c.x)
    return Drawn((h, comp.w_kv, comp.w_z, comp.bias, comp.norm), context=comp)


def _streamed(h: torch.Tensor, comp: Compressor) -> torch.Tensor:
    stream = StreamingCompressor(comp)
    for t in range(h.shape[1]):
        stream.push(h[:, t])
    return torch.stack(stream.entries, 1)


def _with(comp: Compressor, *p: torch.Tensor) -> Compressor:
    return dataclasses.replace(comp, w_kv=p[0], w_z=p[1], bias=p[2], norm=p[3])


FORMS = comparison(
    "one-shot-vs-loop-vs-streaming",
    "Pooling all windows at once, window by window, and token by token during decoding give the same "
    "entries and gradients.",
    lambda comp, h, *p: (naive_compress(h, _with(comp, *p)),) * 2,
    lambda comp, h, *p: (compress(h, _with(comp, *p)), _streamed(h, _with(comp, *p))),
    _draw,
    CASES,
    outputs=("one-shot", "streaming"),
    grads=("h", "w_kv", "w_z", "bias", "norm"),
)


@check("entry-count", 0.0, measure="abs", covers=(UNEVEN_SIZES, BATCH_OF_ONE))
def entry_counts(s: Setting) -> Outcome:
    """T tokens give floor(T/m) compressed entries (the count the pooling plans with, and
    the entries it returns)."""
    parts: list[Callable[[], Outcome]] = []
    for c in CASES:
        comp = _compressor(s, c, s.generator(30))
        for T in (1, c.m - 1, c.m, 2 * c.m + 1, 75):
            h = s.randn(1, T, D, gen=s.generator(T))
            parts.append(partial(count, entries(comp, T), T // c.m, f"planned entries, m={c.m} T={T}"))
            parts.append(partial(_returned_entries, h, comp, T // c.m, f"m={c.m} T={T}"))
    return numbers_first(parts, 0.0, "abs")


def _returned_entries(h: torch.Tensor, comp: Compressor, expected: int, what: str) -> Outcome:
    return count(compress(h, comp).shape[1], expected, what)


@check("rope-at-i-m", 1e-5)
def rope_at_window_position(s: Setting) -> Outcome:
    """The RoPE channels of entry i are rotated at position i·m; the other channels are untouched."""
    results = []
    for i, c in enumerate(CASES):
        h = s.randn(1, c.T, D, gen=s.generator(40 + i))
        comp = _compressor(s, c, s.generator(41))
        rotated = compress(h, comp)
        plain = compress(h, dataclasses.replace(comp, rope=0))
        turns = [rotate_pairs(plain[0, j, -ROPE:], torch.tensor(float(j * c.m))) for j in range(plain.shape[1])]
        results.append(
            compare_all(
                [
                    (f"rope part {c.id}", torch.stack(turns), rotated[0, :, -ROPE:]),
                    (f"other channels {c.id}", plain[0, :, :-ROPE], rotated[0, :, :-ROPE]),
                ]
            )
        )
    return worst(results)


@check("sparse-covers-dense", 1e-6)
def sparse_selection_covers_dense(s: Setting) -> Outcome:
    """Attention over the top-k entries equals dense attention over the complete entries
    when k covers them all, and query t sees exactly the floor((t+1)/m) entries complete
    at t."""
    c0, c2 = CASES[0], CASES[2]
    comp = _compressor(s, c0, s.generator(50))
    gen = s.generator(51)
    pooled = compress(s.randn(2, c0.T, D, gen=gen), comp)
    q = s.randn(2, c0.T, DC, gen=gen)
    scores = s.randn(2, c0.T, pooled.shape[1], gen=gen)
    dense = attend_compressed(q, pooled, comp)
    sparse = attend_compressed(q, pooled, comp, scores, topk=pooled.shape[1])
    few = attend_compressed(q, pooled, comp, scores, topk=2)
    # Which entries a query sees, measured: with a zero query the weights are uniform over
    # the visible entries, and with one-hot entries the output row is those weights.
    n = c2.T // c2.m
    onehot = torch.eye(n, DC, device=s.device, dtype=s.dtype)[None]
    zero = torch.zeros(1, c2.T, DC, device=s.device, dtype=s.dtype)
    seen = attend_compressed(zero, onehot, dataclasses.replace(comp, stride=c2.m, overlap=True))
    counted = (seen[0] > 0).sum(-1).tolist()
    visible = [count(counted[t], (t + 1) // c2.m, f"query {t} sees {counted[t]} entries") for t in range(c2.T)]
    changed = (dense - few).abs().max().item()
    return worst(
        [compare(dense, sparse), *visible],
        f"top-k = all entries equals dense; query t sees floor((t+1)/m) entries (measured); top-2 differs by "
        f"{changed:.2g}",
    )


VERIFICATION = Verification(
    "deepseek-v4-csa-hca",
    __doc__ or "",
    (FORMS, entry_counts, rope_at_window_position, sparse_selection_covers_dense),
    shapes=tuple(f"{c.id}-d{D}-dc{DC}-rope{ROPE}" for c in CASES),
)
