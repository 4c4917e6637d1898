"""Reference kernels: small, readable PyTorch for each technique, checked numerically.

Layout: ``kernels/<name>/naive.py`` holds the obvious form (loops, float32), a sibling
module holds the structured form (chunkwise, absorbed, paged, sharded, fused ...),
``verification.py`` declares what is compared, on which cases and adversarial input
families, at what tolerance per dtype, and the claim each check stands for, and
``mutants.py`` the bugs the checks must catch. ``kernels.registry`` maps every catalog
technique to its folder or to a reasoned "none"; ``kernels.verify`` runs the checks,
``kernels.mutation`` plants the mutants and ``kernels.record`` writes the results into
the named graph ``kernels``.

Shared pieces: ``checks`` (declaring checks and comparisons), ``measures`` (errors and
claims as numbers), ``families`` (the adversarial inputs), ``formulas`` (the pinned
formulas the naive forms use; never the structured ones), ``stats`` (bounds with a stated
false-failure rate), ``memory`` (peak memory), ``check_inputs`` (draws several kernels
share), ``simulated`` and ``distributed`` (ranks in threads and in gloo processes).

torch is imported only inside this package, and only by the kernel folders and the
runner: importing ``kernels`` or ``kernels.registry`` does not import it.
"""

from __future__ import annotations

from kernels.registry import ENTRIES, Entry, entries, entry

__all__ = ["ENTRIES", "Entry", "entries", "entry"]
