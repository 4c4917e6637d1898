"""Bugs a person makes in weight-absorbed MLA decoding."""

from __future__ import annotations

from kernels.mutation import Mutant

_STEP = "kernels.mla.absorbed:absorbed_step"

MUTANTS = (
    Mutant(
        "scale-without-rope-dims",
        "the softmax scale counts only the no-RoPE dims: nope^-1/2 instead of (nope + rope)^-1/2",
        _STEP,
        "scale = (n + r) ** -0.5",
        "scale = n**-0.5",
        "absorbed-vs-naive",
    ),
    Mutant(
        "key-rope-position-off-by-one",
        "the key's RoPE is applied at position t + 1",
        _STEP,
        'pe_t = apply_rope(kv[:, cfg.kv_rank :], p, cfg.rope_base)',
        'pe_t = apply_rope(kv[:, cfg.kv_rank :], p + 1, cfg.rope_base)',
        "absorbed-vs-naive",
    ),
    Mutant(
        "rope-on-the-latent",
        "RoPE is applied to the cached latent as well, so the cache depends on position",
        _STEP,
        'c_t = rms_norm(kv[:, : cfg.kv_rank], w["kv_norm"])',
        'c_t = apply_rope(rms_norm(kv[:, : cfg.kv_rank], w["kv_norm"]), p, cfg.rope_base)',
        "rope-on-k-pe-only",
    ),
    Mutant(
        "latent-cache-not-appended",
        "the latent cache is overwritten by the new token instead of appended to",
        _STEP,
        'C = c_t[:, None] if cache is None else torch.cat([cache["kv"], c_t[:, None]], 1)',
        "C = c_t[:, None]",
        "cache-per-token",
    ),
)
