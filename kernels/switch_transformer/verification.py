"""Declared verification of Switch routing and its auxiliary loss.

Compared: one-hot/cumsum dispatch into capacity-sized buffers against a token loop,
outputs, per-expert counts and gradients. Properties: no expert exceeds its capacity;
the auxiliary loss is exactly 1 under uniform routing and N when routing collapses.
"""

from __future__ import annotations

import torch

from kernels.checks import (
    Check,
    Outcome,
    Setting,
    Verification,
    against,
    compare_all,
    count,
    gradients,
    worst,
)
from kernels.experts import Experts, init_experts
from kernels.switch_transformer.dispatch import capacity, load_balancing_loss, switch_dispatch
from kernels.switch_transformer.naive import naive_switch

CASES = ((75, 16, 4, 1.0), (100, 24, 6, 1.25))  # tokens, d, experts, capacity factor


def _setup(s: Setting, T: int, d: int, E: int, offset: int):  # type: ignore[no-untyped-def]
    gen = s.generator(offset)
    return (
        s.randn(T, d, gen=gen),
        s.randn(E, d, gen=gen),
        init_experts(E, d, 2 * d, gen, s.device, s.dtype),
    )


def dispatch_matches_loop(s: Setting) -> Outcome:
    results = []
    for i, (T, d, E, factor) in enumerate(CASES):
        x, router, experts = _setup(s, T, d, E, i)
        cap = capacity(T, E, factor)
        cot = (s.randn(T, d, gen=s.generator(10 + i)),)

        def run(fn, cap=cap):  # type: ignore[no-untyped-def]
            return lambda xs, r, w1, w3, w2: fn(xs, r, Experts(w1, w3, w2), cap)[0]

        args = (x, router, *experts.tensors())
        (o1,), g1 = gradients(run(naive_switch), args, cot)
        (o2,), g2 = gradients(run(switch_dispatch), args, cot)
        used = torch.tensor(naive_switch(x, router, experts, cap)[1], dtype=torch.float32)
        counts = switch_dispatch(x, router, experts, cap)[1].float().cpu()
        tag = f"T{T}-E{E}-cf{factor}"
        results.append(
            compare_all(
                [(f"out {tag}", o1, o2), (f"counts {tag}", used, counts)]
                + [
                    (f"d{n} {tag}", a, b)
                    for n, a, b in zip(("x", "router", "w1", "w3", "w2"), g1, g2, strict=True)
                ]
            )
        )
    return worst(results)


def capacity_respected(s: Setting) -> Outcome:
    results = []
    for i, (T, d, E, factor) in enumerate(CASES):
        x, router, experts = _setup(s, T, d, E, 20 + i)
        router = router * 4  # a peaked router, so that capacity binds
        cap = capacity(T, E, factor)
        counts = switch_dispatch(x, router, experts, cap)[1]
        results.append(
            count(
                int((counts > cap).sum()), 0, f"T{T}-E{E}: counts {counts.tolist()}, capacity {cap}"
            )
        )
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
            "Capacity-masked dense dispatch equals routing token by token, "
            "outputs, counts and gradients.",
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
