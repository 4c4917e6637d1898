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
    Mutant(
        "rope-frequencies-halved-exponent",
        "the shared RoPE computes its frequencies as base^(-i/r) instead of base^(-2i/r)",
        "kernels.mla.config:apply_rope",
        "inv = base ** (-torch.arange(0, r, 2, device=x.device, dtype=torch.float64) / r)",
        "inv = base ** (-torch.arange(0, r // 2, device=x.device, dtype=torch.float64) / r)",
        "absorbed-vs-naive",
        kind="independent-reference",
    ),
    Mutant(
        "rope-pairs-adjacent",
        "the shared RoPE rotates adjacent pairs (x_2i, x_2i+1) while the cache layout pairs x_i with x_i+r/2",
        "kernels.mla.config:apply_rope",
        "x1, x2 = x[..., : r // 2], x[..., r // 2 :]",
        "x1, x2 = x[..., 0::2], x[..., 1::2]",
        "absorbed-vs-naive",
        kind="independent-reference",
    ),
    Mutant(
        "kv-norm-epsilon-outside-root",
        "the latent's RMSNorm adds its epsilon after the square root: invisible at unit scale",
        "kernels.mla.config:rms_norm",
        "torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)",
        "1 / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps)",
        "absorbed-vs-naive",
        kind="adversarial-input",
    ),
    Mutant(
        "cache-count-of-the-naive-path",
        "the absorbed cache is counted with the per-head key width, as if W_UK were not absorbed",
        "kernels.mla.absorbed:cache_elements_per_token",
        "parts = [torch.empty(cfg.kv_rank, device=meta), torch.empty(cfg.rope, device=meta)]",
        "parts = [torch.empty(cfg.kv_rank, device=meta), torch.empty(cfg.heads, cfg.rope, device=meta)]",
        "cache-per-token",
        kind="expected-value",
    ),
)
