"""Declared verification of multi-head latent attention.

Compared: weight-absorbed decoding over the latent cache against naive decoding with
per-head keys and values, outputs and weight gradients. Properties: in the DeepSeek-V2
configuration a token caches 576 elements against 32,768 for multi-head attention with
the same heads (and 40,960 in the naive path); RoPE touches only the shared k_pe.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare,
    compare_forms,
    count,
    worst,
)
from kernels.mla.absorbed import absorbed_decode, cache_elements_per_token
from kernels.mla.config import DEEPSEEK_V2, MLAConfig, init_weights
from kernels.mla.naive import naive_decode

SMALL = MLAConfig(heads=4, kv_rank=24, nope=16, rope=8, v_dim=12, dim=40)
B, T = 2, 37


def _setup(s: Setting, offset: int = 0):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    w = init_weights(SMALL, gen, s.device, s.dtype)
    return w, s.randn(B, T, SMALL.dim, gen=gen)


def absorbed_matches_naive(s: Setting) -> Outcome:
    w, x = _setup(s)
    names = list(w)

    def run(decode: Callable[..., tuple[torch.Tensor, object]]) -> Callable[..., torch.Tensor]:
        def fn(x: torch.Tensor, *ws: torch.Tensor) -> torch.Tensor:
            return decode(x, dict(zip(names, ws, strict=True)), SMALL, start=5)[0]

        return fn

    return compare_forms(
        run(naive_decode),
        run(absorbed_decode),
        (x, *w.values()),
        (s.randn(B, T, SMALL.dim, gen=s.generator(1)),),
        outputs=("outputs",),
        grads=("x", *names),
    )


def cache_sizes(s: Setting) -> Outcome:
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


def rope_only_on_k_pe(s: Setting) -> Outcome:
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
    technique="mla",
    compares="weight-absorbed decoding over the latent + RoPE cache against naive decoding with "
    "per-head keys and values: outputs and gradients of the input and every weight",
    shapes=(
        f"B{B}-T{T}-H{SMALL.heads}-r{SMALL.kv_rank}-nope{SMALL.nope}-rope{SMALL.rope}-v{SMALL.v_dim}",
        "DeepSeek-V2 dims for cache counting (meta tensors)",
    ),
    gradients=True,
    checks=(
        Check(
            "absorbed-vs-naive",
            "Absorbed decoding (W_UK folded into q, W_UV after attending) "
            "equals naive decoding, outputs and gradients.",
            absorbed_matches_naive,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "cache-per-token",
            "In the DeepSeek-V2 configuration MLA caches 576 elements per token against 32,768 for MHA.",
            cache_sizes,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "rope-on-k-pe-only",
            "RoPE applies only to the shared 64-d k_pe: the latent cache does "
            "not depend on position, and outputs depend only on relative positions.",
            rope_only_on_k_pe,
            tolerance=1e-4,
        ),
    ),
)
