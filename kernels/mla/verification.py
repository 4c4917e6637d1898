"""Declared verification of multi-head latent attention.

Compared: weight-absorbed decoding over the latent cache against naive decoding with
per-head keys and values, outputs and weight gradients. Properties: in the DeepSeek-V2
configuration a token caches 576 elements against 32,768 for multi-head attention with
the same heads (and 40,960 in the naive path); RoPE touches only the shared k_pe.
"""

from __future__ import annotations

import torch

from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.families import BATCH_OF_ONE, FAR_FROM_UNIT, K_NE_V, TINY
from kernels.measures import Outcome, Setting, compare, count, worst
from kernels.mla.absorbed import absorbed_decode, cache_elements_per_token
from kernels.mla.config import DEEPSEEK_V2, MLAConfig, init_weights
from kernels.mla.naive import naive_decode

SMALL = MLAConfig(heads=4, kv_rank=24, nope=16, rope=8, v_dim=12, dim=40)
#: batch B, tokens T, first position, input scale (value heads of 12 against keys of 16 + 8)
CASES = (
    case(K_NE_V, B=2, T=37, start=5, x=1.0),
    case(FAR_FROM_UNIT, BATCH_OF_ONE, B=1, T=13, start=0, x=TINY),
)
B, T = 2, 37
NAMES = ("wq", "wkv_a", "kv_norm", "wkv_b", "wo")


def _setup(s: Setting, offset: int = 0):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    w = init_weights(SMALL, gen, s.device, s.dtype)
    return w, s.randn(B, T, SMALL.dim, gen=gen)


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    w = init_weights(SMALL, gen, s.device, s.dtype)
    return Drawn((s.randn(c.B, c.T, SMALL.dim, gen=gen, scale=c.x), *(w[n] for n in NAMES)), context=c.start)


ABSORBED = comparison(
    "absorbed-vs-naive",
    "Absorbed decoding (W_UK folded into q, W_UV after attending) equals naive decoding, outputs and gradients.",
    lambda start, x, *w: naive_decode(x, dict(zip(NAMES, w, strict=True)), SMALL, start=start)[0],
    lambda start, x, *w: absorbed_decode(x, dict(zip(NAMES, w, strict=True)), SMALL, start=start)[0],
    _draw,
    CASES,
    grads=("x", *NAMES),
)


@check("cache-per-token", 0.0, measure="abs")
def cache_sizes(s: Setting) -> Outcome:
    """In the DeepSeek-V2 configuration MLA caches 576 elements per token against 32,768
    for MHA (and 40,960 in the naive path); the absorbed decode caches r + rope."""
    w, x = _setup(s, 2)
    _, cache = absorbed_decode(x, w, SMALL)
    measured = sum(t.numel() for t in cache.values()) // (B * T)
    checks = [
        count(
            cache_elements_per_token(DEEPSEEK_V2, "absorbed"),
            576,
            "DeepSeek-V2 latent + RoPE cache",
        ),
        count(cache_elements_per_token(DEEPSEEK_V2, "mha"), 32768, "MHA cache with 128 heads of 128"),
        count(cache_elements_per_token(DEEPSEEK_V2, "naive"), 40960, "naive per-head K and V cache"),
        count(measured, SMALL.kv_rank + SMALL.rope, "elements the absorbed decode actually cached"),
    ]
    ratio = cache_elements_per_token(DEEPSEEK_V2, "mha") / cache_elements_per_token(DEEPSEEK_V2, "absorbed")
    return worst(
        checks,
        f"V2: 576 vs 32768 elements per token ({ratio:.1f}x smaller); small config cached {measured} = r + rope",
    )


@check("rope-on-k-pe-only", 1e-4)
def rope_only_on_k_pe(s: Setting) -> Outcome:
    """RoPE applies only to the shared 64-d k_pe: the latent cache does not depend on
    position, and outputs depend only on relative positions."""
    w, x = _setup(s, 3)
    out0, cache0 = absorbed_decode(x, w, SMALL, start=0)
    out1, cache1 = absorbed_decode(x, w, SMALL, start=1000)
    latent_moved = compare(cache0["kv"], cache1["kv"])
    pe_moved = (cache0["pe"] - cache1["pe"]).abs().max().item()
    shift = compare(out0, out1)
    if pe_moved == 0.0:
        return Outcome(float("inf"), float("inf"), "k_pe did not change with position: RoPE is missing")
    return Outcome(
        max(latent_moved.max_abs, shift.max_abs),
        max(latent_moved.max_rel, shift.max_rel),
        f"shifting every position by 1000: latent cache changed by {latent_moved.max_abs:.2g}, "
        f"k_pe by {pe_moved:.2g}, outputs by {shift.max_abs:.2g}",
    )


VERIFICATION = Verification(
    "mla",
    __doc__ or "",
    (ABSORBED, cache_sizes, rope_only_on_k_pe),
    shapes=(
        *(f"{c.id}-H{SMALL.heads}-r{SMALL.kv_rank}-nope{SMALL.nope}-rope{SMALL.rope}-v{SMALL.v_dim}" for c in CASES),
        "DeepSeek-V2 dims for cache counting (meta tensors)",
    ),
)
