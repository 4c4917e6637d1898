"""Declared verification of hot-expert replication and rerouting.

Compared: greedy replication against brute force over all ways of handing out the spare
slots (the same largest per-replica load); replicated execution against the
unreplicated expert: the same outputs, and the replicas' weight gradients summed equal
the unreplicated gradient. Property: adding replicas never increases the largest load.
"""

from __future__ import annotations

from typing import cast

import torch

from kernels.checks import Verification, check
from kernels.experts import Experts, init_experts
from kernels.families import IDLE_EXPERTS
from kernels.measures import Outcome, Setting, against, compare_all, count, worst
from kernels.ultraep.naive import brute_force_replicas, unreplicated_expert
from kernels.ultraep.replicate import max_load, replicate, replicated_forward, reroute

E, D = 5, 12


@check("greedy-vs-brute-force", 1e-12, measure="abs", covers=(IDLE_EXPERTS,))
def greedy_is_optimal(s: Setting) -> Outcome:
    """Greedy replication reaches the smallest possible maximum per-replica load, also
    with idle experts beside an overloaded one."""
    gen = torch.Generator().manual_seed(s.seed)
    results = []
    for trial in range(30):
        loads = [float(v) for v in torch.randint(1, 200, (E,), generator=gen)]
        if trial % 3 == 0:  # idle experts beside overloaded ones
            loads[-2:] = [0.0, 0.0]
            loads[0] = 900.0
        spare = trial % 6
        results.append(
            against(
                max_load(loads, replicate(loads, spare)),
                brute_force_replicas(loads, spare),
                f"loads {loads}, {spare} spare",
            )
        )
    return worst(results, "greedy max per-replica load equals the brute-force optimum in 30 trials")


def _assignment(gen: torch.Generator, tokens: int, experts: int) -> list[list[int]]:
    """Tokens routed to experts with a skewed popularity: the token ids per expert."""
    popularity = torch.softmax(torch.randn(experts, generator=gen, dtype=torch.float64) * 1.5, 0)
    popularity[-2:] = 0.0  # the last two experts are idle
    choice = torch.multinomial(popularity, tokens, replacement=True, generator=gen).tolist()
    return [[t for t in range(tokens) if choice[t] == e] for e in range(experts)]


@check("rerouted-load", 0.0, measure="abs", covers=(IDLE_EXPERTS,))
def rerouted_load(s: Setting) -> Outcome:
    """On the assignment rerouting produces, the busiest replica receives
    ceil(load/replicas) tokens of the hottest expert, never more as replicas are added;
    every replica slot is a physical replica, idle experts' included, and every token
    lands on exactly one replica of its expert."""
    gen = torch.Generator().manual_seed(s.seed + 1)
    results = []
    increases = trials = 0
    for _ in range(20):
        per_expert = _assignment(gen, 97, 8)
        loads = [float(len(t)) for t in per_expert]
        previous = None
        for spare in range(10):
            counts = replicate(loads, spare)
            replicas = reroute(per_expert, counts)
            received = [len(toks) for _, toks in replicas]
            measured = max(received)
            even = max(-(-len(t) // c) for t, c in zip(per_expert, counts, strict=True))
            results.append(
                against(measured, even, f"{spare} spare: busiest replica {measured} tokens, even split {even}")
            )
            results.append(count(len(replicas), sum(counts), f"{spare} spare: physical replicas"))
            placed = sorted((e, t) for e, toks in replicas for t in toks)
            expected = sorted((e, t) for e, toks in enumerate(per_expert) for t in toks)
            results.append(count(int(placed != expected), 0, "every token on exactly one replica of its expert"))
            if previous is not None:
                increases += measured > previous
                trials += 1
            previous = measured
    results.append(count(increases, 0, f"{trials} replica additions, the busiest replica never grew"))
    return worst(
        results,
        f"busiest replica = ceil(load/replicas) and never grows over {trials} additions; one physical "
        "replica per replica slot, idle experts included",
    )


@check("replica-gradients-sum", 1e-5, gradients=True)
def replicas_sum_to_unreplicated(s: Setting) -> Outcome:
    """Rerouted replicas give the unreplicated outputs, and their weight gradients sum
    to the unreplicated gradient."""
    gen = s.generator(2)
    experts = init_experts(E, D, 2 * D, gen, s.device, s.dtype)
    T = 61
    x = s.randn(T, D, gen=gen)
    assignment = torch.randint(E, (T,), generator=gen).tolist()
    tokens_per_expert = [[t for t in range(T) if assignment[t] == e] for e in range(E)]
    counts = replicate([float(len(t)) for t in tokens_per_expert], spare=4)
    replicas = reroute(tokens_per_expert, counts)
    cot = s.randn(T, D, gen=gen)
    out, copies = replicated_forward(x, experts, replicas)
    grads = torch.autograd.grad((out * cot).sum(), [w for c in copies for w in c.tensors()])
    pairs = []
    ref_rows = torch.zeros_like(x)
    for e in range(E):
        idx = torch.tensor(tokens_per_expert[e], device=x.device)
        leaves = [t[e : e + 1].detach().clone().requires_grad_() for t in experts.tensors()]
        y = unreplicated_expert(x[idx], Experts(*leaves), 0)
        ref_rows = ref_rows.index_add(0, idx, y.detach())
        ref_grads = torch.autograd.grad((y * cot[idx]).sum(), leaves)
        mine = [i for i, (le, _) in enumerate(replicas) if le == e]
        for j, name in enumerate(("w1", "w3", "w2")):
            summed = cast(torch.Tensor, sum(grads[3 * i + j] for i in mine))
            pairs.append((f"expert {e} ({len(mine)} replicas) d{name}", ref_grads[j], summed))
    pairs.append(("outputs", ref_rows, out.detach()))
    once = sorted(t for _, toks in replicas for t in toks) == list(range(T))
    out_cmp = compare_all(pairs)
    if not once:
        return Outcome(float("inf"), float("inf"), "some token was not processed exactly once")
    return Outcome(
        out_cmp.max_abs,
        out_cmp.max_rel,
        f"replicas per expert {counts}; every token processed once; {out_cmp.detail}",
    )


VERIFICATION = Verification(
    "ultraep",
    __doc__ or "",
    (greedy_is_optimal, rerouted_load, replicas_sum_to_unreplicated),
    shapes=(f"{E} experts, d{D}, 61 tokens, 4 spare replicas", "30 + 50 random load vectors"),
)
