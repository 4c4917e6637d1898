"""Declared verification of Switch routing and its auxiliary loss.

Compared: one-hot/cumsum dispatch into capacity-sized buffers against a token loop,
outputs, per-expert counts and gradients. Properties: no expert exceeds its capacity;
the auxiliary loss is exactly 1 under uniform routing and N when routing collapses.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from kernels.check_inputs import routed_tokens
from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    against,
    compare_forms,
    count,
    worst,
)
from kernels.experts import Experts
from kernels.switch_transformer.dispatch import capacity, load_balancing_loss, switch_dispatch
from kernels.switch_transformer.naive import naive_switch

CASES = ((75, 16, 4, 1.0), (100, 24, 6, 1.25))  # tokens, d, experts, capacity factor


def dispatch_matches_loop(s: Setting) -> Outcome:
    results = []
    for i, (T, d, E, factor) in enumerate(CASES):
        x, router, experts = routed_tokens(s, T, d, E, offset=i)
        cap = capacity(T, E, factor)

        def run(
            fn: Callable[[torch.Tensor, torch.Tensor, Experts, int], tuple[torch.Tensor, object]],
            cap: int = cap,
        ) -> Callable[..., torch.Tensor]:
            return lambda xs, r, w1, w3, w2: fn(xs, r, Experts(w1, w3, w2), cap)[0]

        used = torch.tensor(naive_switch(x, router, experts, cap)[1], dtype=torch.float32)
        counts = switch_dispatch(x, router, experts, cap)[1].float().cpu()
        tag = f"T{T}-E{E}-cf{factor}"
        results.append(
            compare_forms(
                run(naive_switch),
                run(switch_dispatch),
                (x, router, *experts.tensors()),
                (s.randn(T, d, gen=s.generator(10 + i)),),
                grads=("x", "router", "w1", "w3", "w2"),
                extra=[(f"counts {tag}", used, counts)],
                tag=tag,
            )
        )
    return worst(results)


def capacity_respected(s: Setting) -> Outcome:
    results = []
    for i, (T, d, E, factor) in enumerate(CASES):
        x, router, experts = routed_tokens(s, T, d, E, offset=20 + i)
        router = router * 4  # a peaked router, so that capacity binds
        cap = capacity(T, E, factor)
        counts = switch_dispatch(x, router, experts, cap)[1]
        results.append(count(int((counts > cap).sum()), 0, f"T{T}-E{E}: counts {counts.tolist()}, capacity {cap}"))
    return worst(results)


def aux_loss_values(s: Setting) -> Outcome:
    T, E = 75, 6
    uniform = torch.full((T, E), 1.0 / E, device=s.device)
    collapsed = torch.zeros(T, E, device=s.device)
    collapsed[:, 0] = 1.0
    balanced = torch.eye(E, device=s.device).repeat(T // E + 1, 1)[: E * (T // E)] * 0.5 + 0.5 / E
    return worst(
        [
            against(load_balancing_loss(uniform).item(), 1.0, "uniform routing"),
            against(load_balancing_loss(collapsed).item(), float(E), "collapsed routing"),
            against(load_balancing_loss(balanced).item(), 1.0, "balanced top-1 counts"),
        ],
        f"uniform 1, balanced 1, collapsed N = {E}",
    )


VERIFICATION = Verification(
    technique="switch-transformer",
    compares="one-hot/cumsum dispatch into capacity buffers against a token loop in arrival order: "
    "outputs, per-expert counts and gradients of x, router and expert weights",
    shapes=tuple(f"T{T}-d{d}-E{E}-cf{f}" for T, d, E, f in CASES),
    gradients=True,
    checks=(
        Check(
            "dispatch-vs-loop",
            "Capacity-masked dense dispatch equals routing token by token, outputs, counts and gradients.",
            dispatch_matches_loop,
            tolerance=1e-5,
            gradients=True,
        ),
        Check(
            "capacity",
            "No expert processes more tokens than its capacity.",
            capacity_respected,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "aux-loss",
            "The auxiliary loss N·Σ f_i·P_i is exactly 1 under uniform routing and N "
            "when routing collapses onto one expert.",
            aux_loss_values,
            tolerance=1e-6,
            measure="abs",
        ),
    ),
)
