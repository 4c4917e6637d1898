"""Declared verification of DeepSeek-V4's compressed attention (CSA and HCA).

Compared: one-shot pooling (unfolded windows) against a per-window loop and against a
streaming cache fed one token at a time, for CSA (width 2m, stride m) and HCA
(disjoint windows of m′), with gradients. Properties: ⌊T/m⌋ entries; the RoPE channels
of entry i are rotated at position i·m; attention over the top-k entries equals dense
attention over the complete entries when k covers them all.
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
    worst,
)
from kernels.csa_hca.config import Compressor, init_compressor
from kernels.csa_hca.naive import naive_compress
from kernels.csa_hca.pool import StreamingCompressor, attend_compressed, compress

D, DC, ROPE = 20, 12, 4
CASES = (("CSA", 4, True, 45), ("HCA", 16, False, 75), ("CSA", 3, True, 29))  # name, m, overlap, T


def _compressor(s: Setting, m: int, overlap: bool, offset: int, rope: int = ROPE) -> Compressor:
    return init_compressor(D, DC, m, overlap, s.generator(offset), rope=rope, device=s.device, dtype=s.dtype)


def forms_agree(s: Setting) -> Outcome:
    results = []
    for i, (name, m, overlap, T) in enumerate(CASES):
        comp = _compressor(s, m, overlap, i)
        h = s.randn(2, T, D, gen=s.generator(10 + i))
        stream = StreamingCompressor(comp)
        for t in range(T):
            stream.push(h[:, t])
        ref = naive_compress(h, comp)
        params = (comp.w_kv, comp.w_z, comp.bias, comp.norm)

        def rebuild(
            w_kv: torch.Tensor,
            w_z: torch.Tensor,
            bias: torch.Tensor,
            norm: torch.Tensor,
            comp: Compressor = comp,
        ) -> Compressor:
            return Compressor(w_kv, w_z, bias, norm, comp.stride, comp.overlap, comp.rope)

        tag = f"{name} m={m} T={T}"
        results.append(
            compare_forms(
                lambda h, *p: naive_compress(h, rebuild(*p)),
                lambda h, *p: compress(h, rebuild(*p)),
                (h, *params),
                (s.randn(*ref.shape, gen=s.generator(20 + i)),),
                outputs=(),
                grads=("h", "w_kv", "w_z", "bias", "norm"),
                extra=[
                    (f"one-shot {tag}", ref, compress(h, comp)),
                    (f"streaming {tag}", ref, torch.stack(stream.entries, 1)),
                ],
                tag=tag,
            )
        )
    return worst(results)


def entry_counts(s: Setting) -> Outcome:
    results = []
    for name, m, overlap, _ in CASES:
        comp = _compressor(s, m, overlap, 30)
        for T in (1, m - 1, m, 2 * m + 1, 75):
            h = s.randn(1, T, D, gen=s.generator(T))
            results.append(count(compress(h, comp).shape[1], T // m, f"{name} m={m} T={T}"))
    return worst(results, "floor(T/m) entries for every T tried")


def _rotate_complex(x: torch.Tensor, pos: float, base: float) -> torch.Tensor:
    """An independent RoPE: pairs (x_i, x_{i+r/2}) as complex numbers times e^{iθ}."""
    r = x.shape[-1]
    theta = pos * base ** (-torch.arange(0, r, 2, dtype=torch.float64) / r)
    z = torch.complex(x[..., : r // 2].double(), x[..., r // 2 :].double()) * torch.polar(torch.ones_like(theta), theta)
    return torch.cat([z.real, z.imag], -1).to(x.dtype)


def rope_at_window_position(s: Setting) -> Outcome:
    results = []
    for i, (name, m, overlap, T) in enumerate(CASES):
        rotated = compress(s.randn(1, T, D, gen=s.generator(40 + i)), _compressor(s, m, overlap, 41))
        plain_comp = _compressor(s, m, overlap, 41)
        plain = compress(
            s.randn(1, T, D, gen=s.generator(40 + i)),
            Compressor(
                plain_comp.w_kv,
                plain_comp.w_z,
                plain_comp.bias,
                plain_comp.norm,
                m,
                overlap,
                rope=0,
            ),
        )
        expected = torch.stack(
            [_rotate_complex(plain[0, j, -ROPE:].cpu(), j * m, 10000.0) for j in range(plain.shape[1])]
        )
        results.append(
            compare_all(
                [
                    (f"rope part {name} m={m}", expected, rotated[0, :, -ROPE:].cpu()),
                    (f"other channels {name} m={m}", plain[0, :, :-ROPE], rotated[0, :, :-ROPE]),
                ]
            )
        )
    return worst(results)


def sparse_selection_covers_dense(s: Setting) -> Outcome:
    name, m, overlap, T = CASES[0]
    comp = _compressor(s, m, overlap, 50)
    gen = s.generator(51)
    c = compress(s.randn(2, T, D, gen=gen), comp)
    q = s.randn(2, T, DC, gen=gen)
    scores = s.randn(2, T, c.shape[1], gen=gen)
    dense = attend_compressed(q, c, comp)
    sparse = attend_compressed(q, c, comp, scores, topk=c.shape[1])
    few = attend_compressed(q, c, comp, scores, topk=2)
    # Which entries a query sees, measured: with a zero query the weights are uniform over
    # the visible entries, and with one-hot entries the output row is those weights.
    _, m2, _, T2 = CASES[2]
    n = T2 // m2
    onehot = torch.eye(n, DC, device=s.device, dtype=s.dtype)[None]
    seen = attend_compressed(
        torch.zeros(1, T2, DC, device=s.device, dtype=s.dtype),
        onehot,
        Compressor(comp.w_kv, comp.w_z, comp.bias, comp.norm, m2, True, comp.rope),
    )
    counted = (seen[0] > 0).sum(-1).tolist()
    visible = [count(counted[t], (t + 1) // m2, f"query {t} sees {counted[t]} entries") for t in range(T2)]
    changed = (dense - few).abs().max().item()
    out = worst([compare(dense, sparse), *visible])
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"top-k = all entries equals dense; query t sees floor((t+1)/m) entries (measured); "
        f"top-2 differs by {changed:.2g}",
    )


VERIFICATION = Verification(
    technique="deepseek-v4-csa-hca",
    compares="one-shot gated pooling against a per-window loop and a streaming cache (CSA: "
    "width 2m, "
    "stride m; HCA: disjoint windows of m'), outputs and gradients",
    shapes=tuple(f"{n}-m{m}-T{T}-d{D}-dc{DC}-rope{ROPE}" for n, m, _, T in CASES),
    gradients=True,
    checks=(
        Check(
            "one-shot-vs-loop-vs-streaming",
            "Pooling all windows at once, window by window, and "
            "token by token during decoding give the same entries and gradients.",
            forms_agree,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "entry-count",
            "T tokens give floor(T/m) compressed entries.",
            entry_counts,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "rope-at-i-m",
            "The RoPE channels of entry i are rotated at position i·m; the other channels are untouched.",
            rope_at_window_position,
            tolerance=1e-5,
        ),
        Check(
            "sparse-covers-dense",
            "Attention over the top-k entries equals dense attention over the complete entries when k "
            "covers them all, and query t sees exactly the floor((t+1)/m) entries complete at t.",
            sparse_selection_covers_dense,
            tolerance=1e-6,
        ),
    ),
)
