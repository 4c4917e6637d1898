"""Bugs a person makes in the chunkwise KDA, each with the check that catches it."""

from __future__ import annotations

from kernels.mutation import Mutant

_CHUNK = "kernels.kda.chunk:chunk_kda"
_PRODUCTS = "kernels.kda.chunk:_decayed_products"

MUTANTS = (
    Mutant(
        "cumsum-over-channels",
        "the cumulative log decay is summed over the channel axis instead of the time axis",
        _CHUNK,
        "G = g.cumsum(-2)",
        "G = g.cumsum(-1)",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "exp-before-mask",
        "the decay to earlier sub-chunks is exponentiated before masking: e^{G_r - G_j} "
        "overflows for later j under strong gates and the gradient turns to NaN",
        _PRODUCTS,
        "span.masked_fill(~before[..., None], _NEG_INF).exp()",
        "span.exp().masked_fill(~before[..., None], 0.0)",
        "strong-decay",
    ),
    Mutant(
        "factor-at-sub-chunk-end",
        "the decay is factored at the last position of each sub-chunk, so one factor exceeds "
        "1 and overflows under strong gates",
        _PRODUCTS,
        "ref = Gs[..., 0, :]",
        "ref = Gs[..., -1, :]",
        "strong-decay",
    ),
    Mutant(
        "diagonal-dropped-from-attention",
        "the strict mask is applied to the wrong product: the attention loses its diagonal "
        "and the delta-rule system keeps it",
        _PRODUCTS,
        "if strict:",
        "if not strict:",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "detached-system",
        "the delta-rule system is detached, so no gradient flows through it",
        _CHUNK,
        "A = beta[..., None] * M",
        "A = beta[..., None] * M.detach()",
        "gradients",
    ),
    Mutant(
        "scale-from-value-width",
        "the default scale is taken from the value width V instead of the key width K: the same "
        "whenever K = V",
        _CHUNK,
        "scale = K**-0.5 if scale is None else scale",
        "scale = v.shape[-1] ** -0.5 if scale is None else scale",
        "chunk-vs-recurrent",
        kind="adversarial-input",
    ),
    Mutant(
        "decay-cumsum-in-input-dtype",
        "the channel-wise log gates are summed in the input dtype and only then upcast: exact in a "
        "float32 run, off by a few per cent in bfloat16",
        _CHUNK,
        "G = g.cumsum(-2)  # [B, H, N, C, K]",
        "G = g.to(out_dtype).cumsum(-2).float()  # [B, H, N, C, K]",
        "chunk-vs-recurrent",
        kind="low-precision",
    ),
)
