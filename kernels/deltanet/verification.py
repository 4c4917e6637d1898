"""Declared verification of DeltaNet: the chunkwise (UT transform) form against the
per-head token loop, outputs, final state and gradients."""

from __future__ import annotations

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare_all,
    gradients,
    shape_id,
    worst,
)
from kernels.deltanet.chunk import chunk_delta_rule
from kernels.deltanet.naive import naive_recurrent_delta_rule
from kernels.gated_deltanet.verification import make_inputs

SHAPES = ((2, 45, 2, 16, 16), (1, 70, 1, 32, 32))


def chunk_matches_recurrent(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, C) in enumerate(SHAPES):
        x = make_inputs(s, B, T, H, D, offset=i)
        args = (x["q"], x["k"], x["v"], x["beta"], x["h0"])

        def ref(q, k, v, beta, h0):  # type: ignore[no-untyped-def]
            return naive_recurrent_delta_rule(q, k, v, beta, initial_state=h0)

        def fast(q, k, v, beta, h0, C=C):  # type: ignore[no-untyped-def]
            return chunk_delta_rule(q, k, v, beta, initial_state=h0, chunk_size=C)

        gen = s.generator(100 + i)
        cot = (s.randn(B, T, H, D, gen=gen), s.randn(B, H, D, D, gen=gen))
        (o1, h1), g1 = gradients(ref, args, cot)
        (o2, h2), g2 = gradients(fast, args, cot)
        tag = shape_id(B=B, T=T, H=H, D=D)
        pairs = [(f"o {tag}", o1, o2), (f"ht {tag}", h1, h2)]
        pairs += [
            (f"d{n} {tag}", a, b)
            for n, a, b in zip(("q", "k", "v", "beta", "h0"), g1, g2, strict=True)
        ]
        results.append(compare_all(pairs))
    return worst(results)


VERIFICATION = Verification(
    technique="deltanet",
    compares="chunkwise UT-transform form against the per-head token loop: outputs, final "
    "state, gradients",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=(
        Check(
            "chunk-vs-recurrent",
            "The chunkwise delta rule equals the token-by-token delta rule, "
            "outputs, final state and gradients.",
            chunk_matches_recurrent,
            tolerance=1e-5,
            gradients=True,
        ),
    ),
)
