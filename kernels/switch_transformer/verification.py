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
    compare_all,
    compare_forms,
    count,
    gradients,
    worst,
)
from kernels.experts import Experts
from kernels.switch_transformer.dispatch import capacity, load_balancing_loss, switch_dispatch
from kernels.switch_transformer.naive import naive_switch

CASES = ((45, 16, 4, 1.0), (70, 12, 6, 1.25))  # tokens, d, experts, capacity factor


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


def _aux_loss_by_counting(probs: torch.Tensor) -> torch.Tensor:
    """An independent aux loss, HF's form mean(f·P)·N² with f counted token by token."""
    T, E = probs.shape
    top = probs.argmax(-1).tolist()
    f = torch.tensor([sum(1 for t in top if t == i) / T for i in range(E)], dtype=torch.float64)
    P = torch.stack([sum(probs[t, i].double() for t in range(T)) / T for i in range(E)])  # type: ignore[misc]
    return (f.to(probs.device) * P).mean() * E**2


def aux_loss_values(s: Setting) -> Outcome:
    T, E = 75, 6
    uniform = torch.full((T, E), 1.0 / E, device=s.device)
    collapsed = torch.zeros(T, E, device=s.device)
    collapsed[:, 0] = 1.0
    balanced = torch.eye(E, device=s.device).repeat(T // E + 1, 1)[: E * (T // E)] * 0.5 + 0.5 / E
    results = [
        against(load_balancing_loss(uniform).item(), 1.0, "uniform routing"),
        against(load_balancing_loss(collapsed).item(), float(E), "collapsed routing"),
        against(load_balancing_loss(balanced).item(), 1.0, "balanced top-1 counts"),
    ]
    # Random routers, peaked and flat, against the loss counted token by token, value and
    # gradient with respect to the router logits (under a loss scale that is not 1).
    gen = s.generator(30)
    for temperature in (0.3, 1.0, 3.0):
        logits = s.randn(T, E, gen=gen, scale=temperature)
        (ref,), (g_ref,) = gradients(lambda z: _aux_loss_by_counting(z.softmax(-1)), (logits,))
        (out,), (g_out,) = gradients(lambda z: load_balancing_loss(z.softmax(-1)), (logits,))
        results.append(compare_all([(f"loss t={temperature}", ref, out), (f"dlogits t={temperature}", g_ref, g_out)]))
    return worst(results, f"uniform 1, balanced 1, collapsed N = {E}; random routers equal the counted loss")


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
            "The auxiliary loss N·Σ f_i·P_i is exactly 1 under uniform routing and N when routing "
            "collapses onto one expert, and on random routers equals HF's mean(f·P)·N² counted "
            "token by token, value and gradient.",
            aux_loss_values,
            tolerance=1e-6,
            measure="abs",
        ),
    ),
)
