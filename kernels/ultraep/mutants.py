"""Bugs a person makes in hot-expert replication and rerouting."""

from __future__ import annotations

from kernels.mutation import Mutant

_R = "kernels.ultraep.replicate"

MUTANTS = (
    Mutant(
        "reroute-spills-one-token",
        "rerouting moves one token to each extra replica and leaves the rest on the home "
        "replica: every token is still processed once, but the load is not spread",
        f"{_R}:reroute",
        "replicas.append((e, tokens[r::n]))",
        "replicas.append((e, tokens[n - 1 :] if r == 0 else tokens[r - 1 : r]))",
        "rerouted-load",
    ),
    Mutant(
        "greedy-by-total-load",
        "a spare replica goes to the expert with the largest total load, not the largest load "
        "per replica, so the hottest expert takes every spare",
        f"{_R}:replicate",
        "key=lambda e: (loads[e] / counts[e], -e)",
        "key=lambda e: (loads[e], -e)",
        "greedy-vs-brute-force",
    ),
    Mutant(
        "replicas-averaged",
        "each replica's output is divided by the expert's replica count, as if the replicas "
        "were averaged like data-parallel gradients",
        f"{_R}:replicated_forward",
        "out = out.index_add(0, idx, apply_expert(x[idx], w, 0))",
        "out = out.index_add(0, idx, apply_expert(x[idx], w, 0) / sum(r[0] == e for r in replicas))",
        "replica-gradients-sum",
    ),
    Mutant(
        "idle-experts-lose-their-replica",
        "rerouting creates replicas only for experts that received tokens, so an idle expert's "
        "replica slot holds no physical replica and the placement no longer matches the plan",
        f"{_R}:reroute",
        "for r in range(n):",
        "for r in range(n if tokens else 0):",
        "rerouted-load",
        kind="adversarial-input",
    ),
    Mutant(
        "expert-gate-and-up-swapped",
        "the shared expert gates with the up projection and carries the gate projection: "
        "(silu(x W₃) ⊙ x W₁) W₂",
        "kernels.experts:apply_expert",
        "act(x @ experts.w1[e].T, x @ experts.w3[e].T)",
        "act(x @ experts.w3[e].T, x @ experts.w1[e].T)",
        "replica-gradients-sum",
        kind="independent-reference",
    ),
)
