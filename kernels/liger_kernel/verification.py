"""Declared verification of the Liger-style fused operations.

Compared: chunked fused linear cross-entropy (gradients computed in the forward) against
the LM head plus cross-entropy on full logits, loss and gradients, with ignored rows;
hand-written RMSNorm (Llama and Gemma offset), rotate_half RoPE and SwiGLU against
their autograd references. Property: the fused loss's peak memory holds chunk × V
logits, never BT × V.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    compare_forms,
    within,
    worst,
)
from kernels.liger_kernel.fused import chunk_size, fused_linear_cross_entropy, rmsnorm, rope, swiglu
from kernels.liger_kernel.naive import naive_lm_head_ce, naive_rmsnorm, naive_rope, naive_swiglu
from kernels.memory import peak_bytes

#: (BT, H, V, scale of the hidden states): the last gives logits of order ±100, where e^x
#: overflows float32 unless the log-sum-exp is taken first.
FLCE = ((150, 32, 1000, 1.0), (75, 24, 333, 1.0), (37, 16, 129, 40.0))


def _flce_inputs(s: Setting, BT: int, H: int, V: int, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    h = s.randn(BT, H, gen=gen)
    w = s.randn(V, H, gen=gen, scale=H**-0.5)
    target = s.randint(V, BT, gen=gen)
    target[::7] = -100  # ignored rows
    return h, w, target


def flce_matches_full(s: Setting) -> Outcome:
    results = []
    for i, (BT, H, V, scale) in enumerate(FLCE):
        h, w, target = _flce_inputs(s, BT, H, V, i)
        h = h * scale
        results.append(
            compare_forms(
                lambda h, w, t=target: naive_lm_head_ce(h, w, t),
                lambda h, w, t=target: fused_linear_cross_entropy(h, w, t),
                (h, w),
                outputs=("loss",),
                grads=("h", "W"),
                tag=f"BT{BT}-H{H}-V{V} scale {scale:g}",
            )
        )
    return worst(results)


def flce_memory(s: Setting) -> Outcome:
    BT, H, V = 400, 32, 500
    h, w, target = _flce_inputs(s, BT, H, V, 10)
    h.requires_grad_(True)
    w.requires_grad_(True)

    def step(
        loss_fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
    ) -> Callable[[], tuple[torch.Tensor, ...]]:
        return lambda: torch.autograd.grad(loss_fn(h, w, target), (h, w))

    full, _, _ = peak_bytes(step(naive_lm_head_ce))
    fused, _, _ = peak_bytes(step(fused_linear_cross_entropy))
    chunk = chunk_size(BT, V, H)
    # The gradients it must return (held twice: stored, then scaled) plus a few chunk×V slices.
    bound = 2 * (V * H + BT * H) * 4 + 4 * chunk * V * 4
    out = within(fused, bound)
    return Outcome(
        out.max_abs,
        out.max_rel,
        f"peak {fused / 2**20:.2f} MiB fused vs {full / 2**20:.2f} MiB full logits "
        f"({full / fused:.1f}x); "
        f"chunk {chunk} x V; bound {bound / 2**20:.2f} MiB has no BT x V term "
        f"(BT x V logits alone are {BT * V * 4 / 2**20:.2f} MiB)",
    )


def rmsnorm_matches(s: Setting) -> Outcome:
    results = []
    for name, offset in (("llama", 0.0), ("gemma", 1.0)):
        gen = s.generator(20)
        x, wt = s.randn(2, 37, 48, gen=gen), s.randn(48, gen=gen, scale=0.5)
        cot = (s.randn(2, 37, 48, gen=gen),)
        results.append(
            compare_forms(
                lambda x, w, o=offset: naive_rmsnorm(x, w, offset=o),
                lambda x, w, o=offset: rmsnorm(x, w, offset=o),
                (x, wt),
                cot,
                outputs=("y",),
                grads=("x", "w"),
                tag=name,
            )
        )
    return worst(results)


def rope_matches(s: Setting) -> Outcome:
    gen = s.generator(30)
    x = s.randn(2, 45, 3, 32, gen=gen)
    positions = torch.arange(7, 52)
    cot = (s.randn(2, 45, 3, 32, gen=gen),)
    return compare_forms(
        lambda x: naive_rope(x, positions),
        lambda x: rope(x, positions),
        (x,),
        cot,
        outputs=("rotated",),
        grads=("x",),
    )


def swiglu_matches(s: Setting) -> Outcome:
    gen = s.generator(40)
    a, b = s.randn(3, 37, 40, gen=gen, scale=3.0), s.randn(3, 37, 40, gen=gen)
    cot = (s.randn(3, 37, 40, gen=gen),)
    return compare_forms(naive_swiglu, swiglu, (a, b), cot, grads=("a", "b"))


VERIFICATION = Verification(
    technique="liger-kernel",
    compares="chunked fused linear cross-entropy against LM head + cross-entropy on full logits "
    "(loss, "
    "dh, dW, with ignored rows); hand-written RMSNorm, RoPE and SwiGLU against autograd",
    shapes=tuple(f"BT{BT}-H{H}-V{V}" for BT, H, V, _ in FLCE)
    + (
        "BT400-H32-V500 (memory)",
        "B2-T37-D48 (RMSNorm)",
        "B2-T45-H3-D32 (RoPE)",
        "B3-T37-D40 (SwiGLU)",
    ),
    gradients=True,
    checks=(
        Check(
            "flce-vs-full",
            "Chunked fused linear cross-entropy equals the full-logits loss: loss and "
            "gradients of hidden states and head weight.",
            flce_matches_full,
            tolerance=1e-5,
            gradients=True,
            tolerances={"bfloat16": 5e-2},
        ),
        Check(
            "flce-peak-memory",
            "Peak memory of the fused loss holds chunk x V logits, not BT x V.",
            flce_memory,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "rmsnorm",
            "The hand-written RMSNorm (offset 0 and Gemma's offset 1) equals autograd's, outputs and gradients.",
            rmsnorm_matches,
            tolerance=1e-5,
            gradients=True,
            tolerances={"bfloat16": 2e-2},
        ),
        Check(
            "rope",
            "rotate_half RoPE with a rotate-by-minus-theta backward equals complex multiplication under autograd.",
            rope_matches,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "swiglu",
            "The hand-written SwiGLU backward equals autograd's.",
            swiglu_matches,
            tolerance=1e-6,
            gradients=True,
        ),
    ),
)
