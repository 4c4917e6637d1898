"""Bugs a person makes in greedy EAGLE decoding."""

from __future__ import annotations

from kernels.mutation import Mutant

_DEC = "kernels.eagle.speculative:eagle_decode"

MUTANTS = (
    Mutant(
        "verify-against-next-position",
        "a drafted token is compared with the target's choice one position later",
        _DEC,
        "bool(choice[kept] == guess[kept][0])",
        "bool(choice[kept + 1] == guess[kept][0])",
        "lossless",
    ),
    Mutant(
        "context-loses-verified-token",
        "the verified token is left out of the context the next round continues from",
        _DEC,
        "tokens = torch.cat([tokens, nxt, *guess[:kept]])",
        "tokens = torch.cat([tokens, *guess[:kept]])",
        "lossless",
    ),
    Mutant(
        "last-guess-never-kept",
        "the acceptance loop stops one short, so the last drafted token is never kept",
        _DEC,
        "while kept < k and",
        "while kept < k - 1 and",
        "exact-draft-passes",
    ),
    Mutant(
        "verification-pass-not-counted",
        "the target pass of each round is not counted",
        _DEC,
        "        passes += 1\n",
        "",
        "exact-draft-passes",
    ),
)
