"""Declared verification of Mamba2's state-space duality: the chunked (masked decayed
attention plus inter-chunk state) form against the recurrence, with gradients."""

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
from kernels.gated_deltanet.verification import make_inputs
from kernels.mamba2.naive import naive_recurrent_ssd
from kernels.mamba2.ssd import chunk_ssd

SHAPES = ((2, 75, 2, 16, 16), (1, 100, 3, 32, 64))


def chunk_matches_recurrent(s: Setting) -> Outcome:
    results = []
    for i, (B, T, H, D, C) in enumerate(SHAPES):
        x = make_inputs(s, B, T, H, D, offset=i)
        args = (x["q"], x["k"], x["v"], x["g"], x["h0"])

        def ref(q, k, v, g, h0, D=D):  # type: ignore[no-untyped-def]
            return naive_recurrent_ssd(q, k, v, g, scale=D**-0.5, initial_state=h0)

        def fast(q, k, v, g, h0, C=C, D=D):  # type: ignore[no-untyped-def]
            return chunk_ssd(q, k, v, g, scale=D**-0.5, initial_state=h0, chunk_size=C)

        gen = s.generator(200 + i)
        cot = (s.randn(B, T, H, D, gen=gen), s.randn(B, H, D, D, gen=gen))
        (o1, h1), g1 = gradients(ref, args, cot)
        (o2, h2), g2 = gradients(fast, args, cot)
        tag = shape_id(B=B, T=T, H=H, D=D)
        pairs = [(f"o {tag}", o1, o2), (f"ht {tag}", h1, h2)]
        pairs += [
            (f"d{n} {tag}", a, b)
            for n, a, b in zip(("q", "k", "v", "g", "h0"), g1, g2, strict=True)
        ]
        results.append(compare_all(pairs))
    return worst(results)


VERIFICATION = Verification(
    technique="mamba2",
    compares="chunked state-space-duality form against the scalar-decay recurrence: outputs, final "
    "state, gradients",
    shapes=tuple(shape_id(B=B, T=T, H=H, D=D, C=C) for B, T, H, D, C in SHAPES),
    gradients=True,
    checks=(
        Check(
            "ssd-vs-recurrent",
            "The chunked (dual, attention-like) form equals the state-space "
            "recurrence, outputs, final state and gradients.",
            chunk_matches_recurrent,
            tolerance=1e-5,
            gradients=True,
        ),
    ),
)
