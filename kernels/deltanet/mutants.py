"""Bugs a person makes in the chunkwise delta rule, each with the check that catches it."""

from __future__ import annotations

from kernels.mutation import Mutant

_CHUNK = "kernels.deltanet.chunk:chunk_delta_rule"

MUTANTS = (
    Mutant(
        "strict-attention-mask",
        "the intra-chunk attention uses the strict mask, so a token does not see its own value",
        _CHUNK,
        "attn = (q @ k.transpose(-1, -2)).masked_fill(~inclusive, 0.0)",
        "attn = (q @ k.transpose(-1, -2)).masked_fill(~strict, 0.0)",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "unscaled-w",
        "β is left out of the right-hand side of W, so h₀ is removed without the write strength",
        _CHUNK,
        "w = torch.linalg.solve_triangular(A, beta[..., None] * k,",
        "w = torch.linalg.solve_triangular(A, k,",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "state-from-values",
        "the state update adds the raw values V instead of the corrected values U",
        _CHUNK,
        "h = h + k[:, :, n].transpose(-1, -2) @ u",
        "h = h + k[:, :, n].transpose(-1, -2) @ v[:, :, n]",
        "chunk-vs-recurrent",
    ),
    Mutant(
        "detached-keys",
        "the keys of the triangular system are detached, so dk misses the K Kᵀ term",
        _CHUNK,
        "A = (beta[..., None] * (k @ k.transpose(-1, -2)))",
        "A = (beta[..., None] * (k @ k.transpose(-1, -2)).detach())",
        "gradients",
    ),
    Mutant(
        "explicit-scale-replaced",
        "an explicit scale is replaced by the default 1/sqrt(K) instead of being used",
        _CHUNK,
        "scale = q.shape[-1] ** -0.5 if scale is None else scale",
        "scale = q.shape[-1] ** -0.5",
        "chunk-vs-recurrent",
        kind="adversarial-input",
    ),
)
