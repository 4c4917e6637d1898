"""Declared verification of Switch routing and its auxiliary loss.

Compared: one-hot/cumsum dispatch into capacity-sized buffers against a token loop,
outputs, per-expert counts and gradients, also when the last experts get no token and
one gets far more than fits. Properties: the capacity is ⌈T·c/E⌉ and no expert exceeds
it (the expected counts worked out here from the routing); the auxiliary loss is
exactly 1 under uniform routing and N when routing collapses.
"""

from __future__ import annotations

import math

import torch

from kernels.check_inputs import routed_tokens
from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.experts import Experts
from kernels.families import BATCH_OF_ONE, EXTREME_LOGITS, IDLE_EXPERTS, UNEVEN_SIZES
from kernels.measures import Outcome, Setting, against, compare, gradients, worst
from kernels.switch_transformer.dispatch import capacity, load_balancing_loss, switch_dispatch
from kernels.switch_transformer.naive import naive_switch

#: tokens T, width d, experts E, capacity factor cf
CASES = (
    case(T=45, d=16, E=4, cf=1.0),
    case(T=70, d=12, E=6, cf=1.25),
    case(IDLE_EXPERTS, UNEVEN_SIZES, T=37, d=8, E=6, cf=1.0),
    case(BATCH_OF_ONE, T=1, d=8, E=4, cf=1.0),
)


def _capacity(T: int, E: int, factor: float) -> int:
    """The capacity from its formula: ⌈T·c/E⌉ token slots per expert."""
    return math.ceil(T * factor / E)


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    x, router, experts = routed_tokens(s, c, gen)
    return Drawn((x, router, *experts.tensors()), context=_capacity(c.T, c.E, c.cf))


def _loop(cap: int, x: torch.Tensor, router: torch.Tensor, *w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out, used = naive_switch(x, router, Experts(*w), cap)
    return out, torch.tensor(used, dtype=torch.float32)


def _dense(cap: int, x: torch.Tensor, router: torch.Tensor, *w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out, counts = switch_dispatch(x, router, Experts(*w), cap)
    return out, counts.float().cpu()


DISPATCH = comparison(
    "dispatch-vs-loop",
    "Capacity-masked dense dispatch equals routing token by token, outputs, counts and gradients.",
    _loop,
    _dense,
    _draw,
    CASES,
    outputs=("out", "counts"),
    grads=("x", "router", "w1", "w3", "w2"),
)


@check("capacity", 0.0, measure="abs", covers=(IDLE_EXPERTS, UNEVEN_SIZES))
def capacity_respected(s: Setting) -> Outcome:
    """The capacity is ⌈T·c/E⌉, and under an overloaded routing each expert processes
    exactly min(tokens routed to it, capacity): the full one stops at the capacity, the
    idle ones at 0."""
    results = [
        against(capacity(T, E, cf), _capacity(T, E, cf), f"capacity({T}, {E}, {cf})")
        for T, E, cf in ((45, 4, 1.0), (70, 6, 1.25), (10, 4, 1.5), (1, 8, 2.0), (97, 8, 0.5))
    ]
    for c in CASES[2:]:
        x, router, experts = routed_tokens(s, c, s.generator(20))
        cap = _capacity(c.T, c.E, c.cf)
        routed = torch.bincount((x @ router.T).argmax(-1).cpu(), minlength=c.E)
        expected = routed.clamp(max=cap).double()
        counts = switch_dispatch(x, router, experts, cap)[1].double().cpu()
        results.append(compare(expected, counts, f"{c.id}: routed {routed.tolist()}, capacity {cap}"))
    return worst(results)


def _aux_loss_by_counting(probs: torch.Tensor) -> torch.Tensor:
    """An independent aux loss, HF's form mean(f·P)·N² with f counted token by token."""
    T, E = probs.shape
    top = probs.argmax(-1).tolist()
    f = torch.tensor([sum(1 for t in top if t == i) / T for i in range(E)], dtype=torch.float64)
    P = torch.stack([sum(probs[t, i].double() for t in range(T)) / T for i in range(E)])  # type: ignore[misc]
    return (f.to(probs.device) * P).mean() * E**2


@check("aux-loss", 1e-6, measure="abs", covers=(EXTREME_LOGITS,))
def aux_loss_values(s: Setting) -> Outcome:
    """The auxiliary loss N·Σ f_i·P_i is exactly 1 under uniform routing and N when
    routing collapses onto one expert, and on random routers (logits up to 1e2) equals
    HF's mean(f·P)·N² counted token by token, value and gradient."""
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
    gen = s.generator(30)
    for temperature in (0.3, 1.0, 3.0, 100.0):
        logits = s.randn(T, E, gen=gen, scale=temperature)
        (ref,), (g_ref,) = gradients(lambda z: _aux_loss_by_counting(z.softmax(-1)), (logits,))
        (out,), (g_out,) = gradients(lambda z: load_balancing_loss(z.softmax(-1)), (logits,))
        results += [compare(ref, out, f"loss t={temperature}"), compare(g_ref, g_out, f"dlogits t={temperature}")]
    return worst(results, f"uniform 1, balanced 1, collapsed N = {E}; random routers equal the counted loss")


VERIFICATION = Verification("switch-transformer", __doc__ or "", (DISPATCH, capacity_respected, aux_loss_values))
