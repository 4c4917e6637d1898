"""Bugs a person makes in Mamba2's chunked form, each with the check that catches it."""

from __future__ import annotations

from kernels.mutation import Mutant

_SSD = "kernels.mamba2.ssd:chunk_ssd"

MUTANTS = (
    Mutant(
        "exp-before-mask",
        "the pairwise decay is exponentiated before the causal mask: e^{G_i - G_j} overflows "
        "for j > i under strong decay and its gradient turns to NaN",
        _SSD,
        'decay = diff.masked_fill(~inclusive, float("-inf")).exp()',
        "decay = diff.exp().masked_fill(~inclusive, 0.0)",
        "strong-decay",
    ),
    Mutant(
        "exclusive-cumsum",
        "off-by-one in the cumulative log decay: G_i leaves out token i's own gate",
        _SSD,
        "G = g.cumsum(-1)",
        "G = g.cumsum(-1) - g",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "chunk-decay-first-position",
        "the state is carried with the decay of the chunk's first token instead of its total",
        _SSD,
        "h * G[:, :, n, -1].exp()[..., None, None]",
        "h * G[:, :, n, 0].exp()[..., None, None]",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "undecayed-query",
        "the queries read the incoming state without their decay since the chunk start",
        _SSD,
        "outputs.append(intra[:, :, n] + q_decay[:, :, n] @ h)",
        "outputs.append(intra[:, :, n] + q[:, :, n] @ h)",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "decay-cumsum-in-input-dtype",
        "the log decays are summed in the input dtype and only then upcast, so their cumulative sum runs "
        "in bfloat16",
        _SSD,
        "G = g.cumsum(-1)",
        "G = g.to(out_dtype).cumsum(-1).float()",
        "chunk-vs-recurrent",
        kind="low-precision",
    ),
)
