"""The adversarial input families, declared once, and the draws that build them.

Random N(0, 1) inputs of tidy sizes are kind to a kernel: every expert gets a token,
every length divides by the world size and the chunk, keys and values have one width,
every call passes an initial state and the default scale. A bug that lives outside that
comfort zone passes. Each family below names one way out of it; a check states the
families it covers (``Check.covers``, or the families of its cases), and ``kg kernels
verify -f json`` reports them.

The draws here are what several kernels need alike; a family that only one kernel can
use is built in its own verification from the constants below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = [
    "BATCH_OF_ONE",
    "EXTREME_LOGITS",
    "FAMILIES",
    "FAR_FROM_UNIT",
    "HUGE",
    "IDLE_EXPERTS",
    "K_NE_V",
    "NON_DEFAULT_SCALE",
    "NO_INITIAL_STATE",
    "TINY",
    "UNEVEN_SIZES",
    "one_row_over",
    "skewed_choice",
    "skewed_router",
]

IDLE_EXPERTS = "idle-and-overloaded-experts"
UNEVEN_SIZES = "uneven-sizes"
K_NE_V = "k-ne-v"
NON_DEFAULT_SCALE = "explicit-scale"
NO_INITIAL_STATE = "no-initial-state"
FAR_FROM_UNIT = "far-from-unit-scale"
EXTREME_LOGITS = "extreme-logits"
BATCH_OF_ONE = "batch-of-one"

#: Every family, with what its inputs look like.
FAMILIES: dict[str, str] = {
    IDLE_EXPERTS: "routings where the last experts receive no token at all and one expert receives "
    "far more than its share (more than its capacity where there is one)",
    UNEVEN_SIZES: "sizes that do not divide by the world size, the chunk or the block, including "
    "a remainder of exactly one row",
    K_NE_V: "key and value widths that differ (K != V), and heads that are not square",
    NON_DEFAULT_SCALE: "an explicit scale argument that differs from the default 1/sqrt(d)",
    NO_INITIAL_STATE: "recurrences started without an initial state (the zero state the kernel allocates itself)",
    FAR_FROM_UNIT: "inputs far from unit scale: tiny norms (1e-4) where an epsilon matters, and huge ones (1e4)",
    EXTREME_LOGITS: "logits or scores of order 1e2 to 1e4, where exp overflows float32 unless the "
    "maximum is subtracted first",
    BATCH_OF_ONE: "a batch (or group, or sequence count) of exactly one",
}

#: Scales of the far-from-unit family: an epsilon of 1e-6 is not negligible next to a
#: mean square of TINY², and HUGE² is far above it.
TINY = 1e-4
HUGE = 1e4


def one_row_over(divisor: int, blocks: int = 2) -> int:
    """A size that leaves a remainder of exactly one row after ``blocks`` full blocks."""
    return divisor * blocks + 1


def skewed_router(
    x: torch.Tensor, router: torch.Tensor, *, idle: int = 2, hot: float = 2.5
) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokens and a router whose argmax leaves the last ``idle`` experts without a token
    and sends about half the tokens to expert 0.

    The first feature of every token becomes 1, a bias: the router's first column gives
    expert 0 a head start of ``hot`` and the idle experts a deficit of 100."""
    x, router = x.clone(), router.clone()
    x[:, 0] = 1.0
    router[:, 0] = 0.0
    router[0, 0] = hot
    router[router.shape[0] - idle :, 0] = -100.0
    return x, router


def skewed_choice(gen: torch.Generator, tokens: int, experts: int, k: int, *, idle: int = 2) -> torch.Tensor:
    """Top-k expert choices [tokens, k] in which expert 0 is chosen by every token, the
    last ``idle`` experts by none, and the others at random (without repeats in a row)."""
    import torch

    rows = []
    for _ in range(tokens):
        others = torch.randperm(experts - 1 - idle, generator=gen)[: k - 1] + 1
        rows.append(torch.cat([torch.zeros(1, dtype=torch.long), others]))
    return torch.stack(rows)
