"""The process that compacts an embedded store in the background (kg.store.compaction):
``python -m kg.store.compactor DIR``."""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from kg.errors import KGError
from kg.store import compaction
from kg.store.embedded import OxigraphStore
from kg.store.folder import YIELDING

__all__ = ["main"]


#: Seconds the process waits before it looks at the store: commands run one after another
#: (a script, a benchmark) each take the store before a compaction starts only to be stopped.
PAUSE = 2.0


def main(argv: list[str]) -> int:
    """Compact the store at ``argv[0]`` if a compaction is still due and no writer holds it."""
    path = Path(argv[0])
    time.sleep(PAUSE)
    try:
        store = OxigraphStore(path, wait=0.0, command=YIELDING)
    except KGError:
        return 0  # a writer holds it: that writer starts this again when it closes
    try:
        if not compaction.due(path):
            return 0
        began = time.perf_counter()
        store.compact()
        seconds = time.perf_counter() - began
        compaction.record(path, store.count(), seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
