"""Bugs a person makes in the chunkwise Gated DeltaNet, each with the check that catches it."""

from __future__ import annotations

from kernels.mutation import Mutant

_CHUNK = "kernels.gated_deltanet.chunk:chunk_gated_delta_rule"

MUTANTS = (
    Mutant(
        "exclusive-cumsum",
        "off-by-one in the cumulative log decay: G_i sums the gates before token i, not up to it",
        _CHUNK,
        "G = g.cumsum(-1)",
        "G = g.cumsum(-1) - g",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "exp-before-mask",
        "the pairwise decay is exponentiated before the causal mask is applied: e^{G_i - G_j} "
        "overflows for j > i under strong gates, and its gradient turns to NaN",
        _CHUNK,
        'decay = torch.where(inclusive, diff, torch.full_like(diff, float("-inf"))).exp()',
        "decay = torch.where(inclusive, diff.exp(), torch.zeros_like(diff))",
        "strong-decay",
    ),
    Mutant(
        "state-not-decayed",
        "the state carried into the next chunk is not multiplied by the chunk's total decay",
        _CHUNK,
        "h = h * chunk_decay[:, :, n, None, None] + ",
        "h = h + ",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "detached-system",
        "the triangular system is detached (to save memory), so no gradient flows through K Kᵀ",
        _CHUNK,
        "u_tilde = torch.linalg.solve_triangular(A, ",
        "u_tilde = torch.linalg.solve_triangular(A.detach(), ",
        "gradients",
    ),
    Mutant(
        "missing-scale",
        "the queries are not scaled by K^-1/2",
        _CHUNK,
        "q = q * scale",
        "q = q",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "scale-argument-ignored",
        "the scale argument is ignored: the queries are always scaled by K^-1/2",
        _CHUNK,
        "scale = K**-0.5 if scale is None else scale",
        "scale = K**-0.5",
        "chunk-vs-recurrent",
        kind="adversarial-input",
    ),
    Mutant(
        "gates-cumsum-in-input-dtype",
        "the cumulative log decay is summed in the input dtype and only then upcast: exact in a float32 "
        "run, off by a few per cent in bfloat16",
        _CHUNK,
        "G = g.cumsum(-1)",
        "G = g.to(out_dtype).cumsum(-1).float()",
        "chunk-vs-recurrent",
        kind="low-precision",
    ),
)
