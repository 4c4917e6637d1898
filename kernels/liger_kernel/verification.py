"""Declared verification of the Liger-style fused operations.

Compared: chunked fused linear cross-entropy (gradients computed in the forward) against
the LM head plus cross-entropy on full logits, loss and gradients, with ignored rows, a
final chunk of a single row and logits of order 100; hand-written RMSNorm (Llama and
Gemma offset, also for rows of norm 1e-4 and 1e4), rotate_half RoPE and SwiGLU against
their autograd references. Properties: the chunk is next_pow2(⌈BT/⌈V/H⌉⌉); the fused
loss's peak memory over forward and backward holds chunk × V logits, never BT × V (the
bound worked out here from the formula).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.families import EXTREME_LOGITS, FAR_FROM_UNIT, HUGE, TINY, UNEVEN_SIZES
from kernels.liger_kernel.fused import chunk_size, fused_linear_cross_entropy, rmsnorm, rope, swiglu
from kernels.liger_kernel.naive import naive_lm_head_ce, naive_rmsnorm, naive_rope, naive_swiglu
from kernels.measures import Outcome, Setting, count, within, worst
from kernels.memory import peak_bytes

#: rows BT, hidden H, vocabulary V, scale of the hidden states (40: logits of order ±100,
#: where e^x overflows float32 unless the log-sum-exp is taken first). BT = 129 leaves a
#: final chunk of one row (chunks of next_pow2(⌈129/⌈1000/32⌉⌉) = 8).
FLCE = (
    case(BT=150, H=32, V=1000, x=1.0),
    case(BT=75, H=24, V=333, x=1.0),
    case(EXTREME_LOGITS, BT=37, H=16, V=129, x=40.0),
    case(UNEVEN_SIZES, BT=129, H=32, V=1000, x=1.0),
)


def _chunk(rows: int, vocab: int, hidden: int) -> int:
    """Liger's chunk from its formula: next_pow2(⌈BT / ⌈V/H⌉⌉)."""
    n = math.ceil(rows / math.ceil(vocab / hidden))
    return 2 ** math.ceil(math.log2(n)) if n > 1 else 1


def _flce_draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    h = s.randn(c.BT, c.H, gen=gen, scale=c.x)
    w = s.randn(c.V, c.H, gen=gen, scale=c.H**-0.5)
    target = s.randint(c.V, c.BT, gen=gen)
    target[::7] = -100  # ignored rows
    return Drawn((h, w), context=target)


FLCE_CHECK = comparison(
    "flce-vs-full",
    "Chunked fused linear cross-entropy equals the full-logits loss: loss and gradients of hidden states and "
    "head weight.",
    lambda t, h, w: naive_lm_head_ce(h, w, t),
    lambda t, h, w: fused_linear_cross_entropy(h, w, t),
    _flce_draw,
    FLCE,
    outputs=("loss",),
    grads=("h", "W"),
    tolerances={"bfloat16": 5e-2},
)


@check("flce-chunk", 0.0, measure="abs", covers=(UNEVEN_SIZES,))
def flce_chunk(s: Setting) -> Outcome:
    """The fused loss walks the rows in chunks of next_pow2(⌈BT/⌈V/H⌉⌉)."""
    cases = [(c.BT, c.V, c.H) for c in FLCE] + [(64, 1000, 32), (400, 500, 32), (1, 32000, 4096), (2048, 32000, 256)]
    return worst([count(chunk_size(*c), _chunk(*c), f"chunk_size{c}") for c in cases], "chunk = next_pow2(⌈BT/⌈V/H⌉⌉)")


@check("flce-peak-memory", 0.0, measure="abs")
def flce_memory(s: Setting) -> Outcome:
    """Peak memory over the fused loss's forward and backward holds chunk x V logits,
    not BT x V: it stays below the gradients it must return (stored, then scaled) plus
    four chunk x V slices."""
    BT, H, V = 400, 32, 500
    h, w = _flce_draw(s, case(BT=BT, H=H, V=V, x=1.0), s.generator(10)).inputs
    target = _flce_draw(s, case(BT=BT, H=H, V=V, x=1.0), s.generator(10)).context
    h.requires_grad_(True)
    w.requires_grad_(True)

    def step(loss_fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[[], object]:
        return lambda: torch.autograd.grad(loss_fn(h, w, target), (h, w))

    full, _, _ = peak_bytes(step(naive_lm_head_ce), s.device)
    fused, _, _ = peak_bytes(step(fused_linear_cross_entropy), s.device)
    chunk = _chunk(BT, V, H)
    bound = 2 * (V * H + BT * H) * 4 + 4 * chunk * V * 4
    return within(
        fused,
        bound,
        f"peak {fused / 2**20:.2f} MiB fused vs {full / 2**20:.2f} MiB full logits ({full / max(fused, 1):.1f}x); "
        f"chunk {chunk} x V; bound {bound / 2**20:.2f} MiB has no BT x V term (BT x V logits alone are "
        f"{BT * V * 4 / 2**20:.2f} MiB)",
    )


#: RMSNorm rows: of unit scale, of norm 1e-4 (the epsilon 1e-6 is not negligible next to
#: their mean square) and 1e4; Llama (offset 0) and Gemma (offset 1) weights.
NORMS = (
    case(offset=0.0, x=1.0),
    case(offset=1.0, x=1.0),
    case(FAR_FROM_UNIT, offset=0.0, x=TINY),
    case(FAR_FROM_UNIT, offset=1.0, x=HUGE),
)

RMSNORM = comparison(
    "rmsnorm",
    "The hand-written RMSNorm (offset 0 and Gemma's offset 1) equals autograd's, outputs and gradients, also "
    "for rows of norm 1e-4 and 1e4.",
    lambda c, x, w: naive_rmsnorm(x, w, offset=c.offset),
    lambda c, x, w: rmsnorm(x, w, offset=c.offset),
    lambda s, c, gen: (s.randn(2, 37, 48, gen=gen, scale=c.x), s.randn(48, gen=gen, scale=0.5)),
    NORMS,
    outputs=("y",),
    grads=("x", "w"),
    tolerances={"bfloat16": 2e-2},
    offset=20,
)
ROPE = comparison(
    "rope",
    "rotate_half RoPE with a rotate-by-minus-theta backward equals complex multiplication under autograd.",
    lambda c, x: naive_rope(x, torch.arange(7, 52)),
    lambda c, x: rope(x, torch.arange(7, 52)),
    lambda s, c, gen: (s.randn(2, 45, 3, 32, gen=gen),),
    (case(B=2, T=45, H=3, D=32),),
    outputs=("rotated",),
    grads=("x",),
    offset=30,
)
SWIGLU = comparison(
    "swiglu",
    "The hand-written SwiGLU backward equals autograd's.",
    lambda c, a, b: naive_swiglu(a, b),
    lambda c, a, b: swiglu(a, b),
    lambda s, c, gen: (s.randn(3, 37, 40, gen=gen, scale=3.0), s.randn(3, 37, 40, gen=gen)),
    (case(B=3, T=37, D=40),),
    grads=("a", "b"),
    tolerance=1e-6,
    offset=40,
)

VERIFICATION = Verification(
    "liger-kernel",
    __doc__ or "",
    (FLCE_CHECK, flce_chunk, flce_memory, RMSNORM, ROPE, SWIGLU),
    shapes=(
        *(c.id for c in FLCE),
        "BT400-H32-V500 (memory)",
        "B2-T37-D48 (RMSNorm)",
        "B2-T45-H3-D32 (RoPE)",
        "B3-T37-D40 (SwiGLU)",
    ),
)
