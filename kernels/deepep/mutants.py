"""Bugs a person makes in expert-parallel dispatch and combine."""

from __future__ import annotations

from kernels.mutation import Mutant

_D = "kernels.deepep.dispatch"

MUTANTS = (
    Mutant(
        "round-robin-placement",
        "the rank of an expert is e mod R instead of e // (E/R), so tokens go to ranks that "
        "do not hold their experts' weights in the layout everyone else assumes",
        f"{_D}:dispatch",
        "targets.setdefault(e // per_rank, [])",
        "targets.setdefault(e % ranks, [])",
        "combine-dispatch",
    ),
    Mutant(
        "second-local-expert-overwrites",
        "when two of a token's experts live on the same rank, the second replaces the first "
        "in the message instead of joining it",
        f"{_D}:dispatch",
        "targets.setdefault(e // per_rank, []).append((e, wt))",
        "targets[e // per_rank] = [(e, wt)]",
        "receive-counts",
    ),
    Mutant(
        "combine-overwrites",
        "the home rank keeps the last rank's result for a token instead of summing them",
        f"{_D}:combine",
        "homes[home][t] = homes[home][t] + y",
        "homes[home][t] = y",
        "ep-moe-vs-loop",
    ),
    Mutant(
        "unweighted-experts",
        "a rank sums its local experts' outputs without the routing weights",
        f"{_D}:expert_parallel_moe",
        "row = sum(wt * apply_expert(x[None], experts, e)[0] for e, wt in local)",
        "row = sum(apply_expert(x[None], experts, e)[0] for e, wt in local)",
        "ep-moe-vs-loop",
    ),
    Mutant(
        "inbox-per-busy-rank",
        "dispatch opens one inbox per rank up to the highest rank any token targets, so a rank "
        "whose experts are all idle has no inbox at all",
        f"{_D}:dispatch",
        "inbox = [Received() for _ in range(ranks)]",
        "inbox = [Received() for _ in range(1 + max(int(ch.max()) for ch in chosen) // per_rank)]",
        "receive-counts",
        kind="adversarial-input",
    ),
)
