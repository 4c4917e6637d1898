"""The process that compacts an embedded store in the background (kg.store.compaction):
``python -m kg.store.compactor DIR``."""

from __future__ import annotations

import re
import resource
import sys
import time
from pathlib import Path

from kg.errors import KGError
from kg.store import compaction
from kg.store.embedded import OxigraphStore
from kg.store.folder import YIELDING

__all__ = ["main", "peak_mb"]


#: Seconds the process waits before it looks at the store: commands run one after another
#: (a script, a benchmark) each take the store before a compaction starts only to be stopped.
PAUSE = 2.0


def peak_mb() -> float:
    """This process's own peak resident memory, in MB: VmHWM where the system has it, not
    ru_maxrss, which counts the memory of the writer that started it (2.9 GB after ``kg link``
    at 700k papers, against 90 MB of its own)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        status = ""
    found = re.search(r"VmHWM:\s+(\d+)", status)
    return int(found.group(1)) / 1024 if found else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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
        compaction.record(path, store.count(), seconds, peak_mb())
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
