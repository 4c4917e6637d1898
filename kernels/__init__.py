"""Reference kernels: small, readable PyTorch for each technique, checked numerically.

Layout: ``kernels/<name>/naive.py`` holds the obvious form (loops, float32), a sibling
module holds the structured form (chunkwise, absorbed, paged, sharded, fused ...), and
``verification.py`` declares what is compared, at what tolerance, and the claim each
check stands for. ``kernels.registry`` maps every catalog technique to its folder or to
a reasoned "none"; ``kernels.verify`` runs the checks and ``kernels.record`` writes the
results into the named graph ``kernels``.

torch is imported only inside this package, and only by the kernel folders and the
runner: importing ``kernels`` or ``kernels.registry`` does not import it.
"""

from __future__ import annotations

from kernels.registry import ENTRIES, Entry, entries, entry

__all__ = ["ENTRIES", "Entry", "entries", "entry"]
