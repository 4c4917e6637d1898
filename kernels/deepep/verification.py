"""Declared verification of expert-parallel dispatch and combine.

Compared: an MoE layer run through dispatch → experts on their ranks → combine against
the single-device token loop, outputs and gradients, also when a whole rank's experts
are idle and when a rank holds one token. Properties: with identity experts and
unweighted combine, combine∘dispatch = x · (number of target ranks); the tokens each
expert receives are exactly its routing count (both counted here from the routing).
"""

from __future__ import annotations

import torch

from kernels.check_inputs import top_k_routing
from kernels.checks import Case, Drawn, Verification, case, check, comparison
from kernels.deepep.dispatch import combine, dispatch, expert_parallel_moe
from kernels.deepep.naive import naive_moe
from kernels.experts import Experts, init_experts
from kernels.families import BATCH_OF_ONE, IDLE_EXPERTS
from kernels.measures import Outcome, Setting, compare, count, worst

#: ranks R, experts E (E/R per rank), top-k, width d, tokens on each rank
CASES = (
    case(R=4, E=8, k=3, d=16, tokens=(13, 7, 10, 5)),
    case(IDLE_EXPERTS, BATCH_OF_ONE, R=4, E=8, k=2, d=8, tokens=(9, 1, 6, 4)),
)


def _draw(s: Setting, c: Case, gen: torch.Generator) -> Drawn:
    """Tokens and routing of every rank; in the idle family the last rank's experts are
    never chosen (rank 3 receives nothing)."""
    xs, chosen, weights = [], [], []
    for n in c.tokens:
        xs.append(s.randn(n, c.d, gen=gen))
        ch, w = top_k_routing(s, case(*c.families, T=n, E=c.E, k=c.k), gen)
        chosen.append(ch)
        weights.append(w)
    experts = init_experts(c.E, c.d, 2 * c.d, gen, s.device, s.dtype)
    return Drawn((torch.cat(xs), *experts.tensors()), context=(c, chosen, weights))


Routing = tuple[Case, list[torch.Tensor], list[torch.Tensor]]


def _expert_parallel(ctx: Routing, x: torch.Tensor, *w: torch.Tensor) -> torch.Tensor:
    c, chosen, weights = ctx
    parts = list(torch.split(x, list(c.tokens)))
    return torch.cat(expert_parallel_moe(parts, chosen, weights, Experts(*w))[0])


EP = comparison(
    "ep-moe-vs-loop",
    "Dispatch/compute/combine equals the token loop, outputs and gradients.",
    lambda ctx, x, *w: naive_moe(x, torch.cat(ctx[1]), torch.cat(ctx[2]), Experts(*w)),
    _expert_parallel,
    _draw,
    CASES,
    grads=("x", "w1", "w3", "w2"),
)


def _routing(s: Setting, c: Case, offset: int) -> tuple[list[torch.Tensor], list[torch.Tensor], list[torch.Tensor]]:
    x, *_ = _draw(s, c, s.generator(offset)).inputs
    _, chosen, weights = _draw(s, c, s.generator(offset)).context
    return list(torch.split(x, list(c.tokens))), chosen, weights


@check("combine-dispatch", 1e-6, covers=(IDLE_EXPERTS, BATCH_OF_ONE))
def round_trip_counts_ranks(s: Setting) -> Outcome:
    """With identity experts and unweighted combine, combine(dispatch(x)) = x times the
    number of ranks holding one of the token's experts (rank of expert e: e // (E/R))."""
    results = []
    for i, c in enumerate(CASES):
        xs, chosen, weights = _routing(s, c, 2 + i)
        inbox = dispatch(xs, chosen, weights, c.E)
        back = combine([list(box.x) for box in inbox], inbox, list(c.tokens), xs[0])
        per_rank = c.E // c.R
        for home, (x, ch) in enumerate(zip(xs, chosen, strict=True)):
            targets = torch.tensor([len({e // per_rank for e in row.tolist()}) for row in ch], dtype=x.dtype)
            results.append(compare(x * targets[:, None].to(x.device), back[home], f"{c.id} home rank {home}"))
    return worst(results, "combine(dispatch(x)) = x·#target ranks on every home rank")


@check("receive-counts", 0.0, measure="abs", covers=(IDLE_EXPERTS, BATCH_OF_ONE))
def receive_counts(s: Setting) -> Outcome:
    """Each expert receives exactly as many tokens as were routed to it (idle ones none),
    and each rank as many rows as tokens that chose one of its experts."""
    results = []
    for i, c in enumerate(CASES):
        xs, chosen, weights = _routing(s, c, 4 + i)
        inbox = dispatch(xs, chosen, weights, c.E)
        received = torch.zeros(c.E, dtype=torch.long)
        for box in inbox:
            for local in box.experts:
                for e, _ in local:
                    received[e] += 1
        routed = [sum(int(e) == expert for ch in chosen for row in ch.tolist() for e in row) for expert in range(c.E)]
        rows = [
            sum(any(e // (c.E // c.R) == r for e in row) for ch in chosen for row in ch.tolist()) for r in range(c.R)
        ]
        got = [len(box.x) for box in inbox]
        results += [
            count(int((received != torch.tensor(routed)).sum()), 0, f"{c.id}: per-expert counts {received.tolist()}"),
            compare(torch.tensor(rows), torch.tensor(got), f"{c.id}: rows per rank {got}, routed {rows}"),
        ]
    return worst(
        results, "per-expert receive counts equal the routing counts; rows per rank equal the tokens routed there"
    )


VERIFICATION = Verification("deepep", __doc__ or "", (EP, round_trip_counts_ranks, receive_counts))
