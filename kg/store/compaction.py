"""A full compaction of an embedded store after large writes, in a process of its own that
gives way to any writer.

RocksDB writes a bulk load as files that overlap the ones before, and compacts them in the
background of whichever process writes next, as far as that process lives; a view published
meanwhile keeps those files for as long as it is the current one. Reading from such files is
slow: at 700k papers (9.4M triples, 2 cores), the narrow query of ``bibliography`` (245k
titles) took 20.5 s on the view that ``kg import rdf`` published, still 17.5 s after an 80 s
``kg link`` had let RocksDB compact as it does, and 6.8 s once ``Store.optimize`` (18 s) had
compacted the whole store; every named query answered by SPARQL was 1.3 to 4 times quicker.

So the writers count the triples they write in bulk (loads, replacements and journalled
transactions) in ``compaction.json``. Any writer that closes with at least
:data:`COMPACT_TRIPLES` (``KG_COMPACT_TRIPLES``) written since the last compaction, and a
quarter or more of what the store held then, starts ``python -m kg.store.compactor DIR``,
detached. That process takes the writers' lock without waiting, as the holder
:data:`~kg.store.folder.YIELDING`; compacts the store; publishes a view that stands for the
same state (so that fresh tables and indexes stay fresh); and sets the count back to 0.

A writer that finds it holding the lock stops it (SIGTERM) and takes the lock at once:
RocksDB installs a compaction's files only when it is complete, so a compaction stopped
halfway leaves the store as it was, and the count stays for the next writer to start
another. The command that started it is never kept waiting for it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kg.settings import count_setting
from kg.store.folder import COMPACTION, write_json_atomically

__all__ = ["COMPACT_TRIPLES", "count", "due", "record", "start", "state"]

#: Triples written in bulk since the last compaction from which the next is due: a 1,000-paper
#: import (about 13,000 triples) leaves the files much as they were; a load of 77,000 papers
#: (1M triples) into a store of 700,000 does not. KG_COMPACT_TRIPLES sets another.
COMPACT_TRIPLES = 1_000_000
#: ... and the share of what the store held at the last compaction: a compaction reads and
#: writes the whole store, so a large store is compacted after proportionally more writes.
COMPACT_SHARE = 0.25


def state(path: Path) -> dict[str, Any]:
    """What ``compaction.json`` of the store at ``path`` holds: the triples ``written`` since
    the last compaction and, once one completed, when (``compacted``), its ``seconds``, its
    ``peak_mb`` and the ``triples`` the store then held."""
    try:
        data = json.loads((path / COMPACTION).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record(path: Path, triples: int, seconds: float, peak_mb: float) -> None:
    """Record a completed compaction of the store at ``path``, which then held ``triples``:
    how long it took and the compacting process's peak memory."""
    write_json_atomically(path / COMPACTION, {
        "written": 0, "triples": triples, "seconds": round(seconds, 1), "peak_mb": round(peak_mb),
        "compacted": time.strftime("%Y-%m-%dT%H:%M:%S%z")})


def due(path: Path) -> bool:
    """Whether a compaction of the store at ``path`` is due."""
    data = state(path)
    written = int(data.get("written", 0))
    return written > 0 and written >= max(count_setting("KG_COMPACT_TRIPLES", COMPACT_TRIPLES),
                                          COMPACT_SHARE * int(data.get("triples", 0)))


def count(path: Path, triples: int) -> None:
    """Count ``triples`` written in bulk to the store at ``path`` (by the writer, which holds
    its lock). Once a compaction is due, every writer that closes starts one, until one
    completes."""
    data = state(path)
    data["written"] = int(data.get("written", 0)) + max(0, triples)
    write_json_atomically(path / COMPACTION, data)


def start(path: Path) -> None:
    """Start the compaction of the store at ``path`` in a process of its own, which outlives
    this one and writes nothing to its terminal."""
    try:
        subprocess.Popen([sys.executable, "-m", "kg.store.compactor", str(path)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         close_fds=True)
    except OSError:
        pass  # the next writer that closes starts it: the count stays
