"""The analytics file as its readers need it: where it lives, opening it, the graphs'
provenance signatures it is compared with, and whether this code made its layout.

A reader (``kg query NAME`` answered from the tables, the web pages, ``kg suggest``)
imports this module, not the builder (:mod:`~kg.analytics.materialize`, which imports the
staging keys, every table's SQL and the catalog): a fifth of a second before the first row.

Whether the file's layout is this code's: the builder writes the schema version and
:func:`code_digest`, a digest of the source of the modules that SQL is made from; a reader
compares them with its own (:func:`kg.analytics.schema.schema_current`).
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import AnalyticsError
from kg.graphs import ONTOLOGY, OVERRIDING, PROVENANCE, SOURCES, graph_name

if TYPE_CHECKING:
    import duckdb
    import pyoxigraph as ox

    from kg.store.base import GraphStore

__all__ = ["GraphState", "code_digest", "connect", "current_view", "database_path", "graph_states", "identity",
           "staged_graphs", "store_dir", "temp_table"]


def database_path(spec: str | None = None) -> Path:
    """Where the analytics file of the store ``spec`` lives.

    ``$KG_ANALYTICS_DB`` if set; for an embedded store in ``DIR``, the file
    ``DIR.analytics.duckdb`` beside it; for a SPARQL endpoint or ``:memory:``, a file
    named after it in the per-user data directory (``~/.local/share/techkg/analytics``).
    An endpoint is named by its query URL alone, password left out: the ``--store``
    value with its ``;options`` and the store's ``location`` find the same file.
    """
    override = os.environ.get("KG_ANALYTICS_DB")
    if override:
        return Path(override).expanduser()
    from kg.iris import slugify
    from kg.store import store_spec

    value = store_spec(spec)
    if value == ":memory:" or value.startswith(("http://", "https://")):
        from platformdirs import user_data_path

        from kg.store.endpoint import redact

        if value != ":memory:":
            value = redact(value.split(";", 1)[0].strip())

        return (
            user_data_path("techkg", appauthor=False) / "analytics" / (slugify(value) + ".duckdb")
        )
    store_dir = Path(value).expanduser()
    return store_dir.with_name(store_dir.name + ".analytics.duckdb")


#: Part of the message of an AnalyticsError for a file another program holds.
IN_USE = "is in use by another program"


def _lock_error(path: Path, exc: Exception) -> AnalyticsError:
    return AnalyticsError(
        f"the analytics file {path} {IN_USE}: {exc}",
        hint="Close the notebook, DuckDB shell or other kg command that has it open, "
        "then try again.",
    )


def engine() -> Any:
    """DuckDB's engine: the extension module the ``duckdb`` package re-exports (the same
    ``connect``, connection class and exceptions). Importing the package costs a reader a
    third of a second or more before its first row (its relational API, written in Python,
    and its version read through importlib.metadata); the engine alone, a tenth of that.
    Use the package itself for its Python parts (relations, Arrow sources, types)."""
    try:
        return importlib.import_module("_duckdb")
    except ImportError:  # a DuckDB laid out otherwise
        return importlib.import_module("duckdb")


#: Held while this process writes the analytics file (:func:`kg.analytics.materialize.build`):
#: a reader in the same process waits for the write, up to :data:`WRITE_WAIT` seconds.
WRITING = threading.RLock()
WRITE_WAIT = 30.0
#: How long a reader waits for another process's write to let go of the file (a status
#: change patches the tables in well under this), before it is refused and SPARQL answers:
#: ``kg serve``'s query workers while the server's keeper patches the tables, or a
#: ``kg query`` beside a ``kg reading set``. A writer waits as long for readers to close
#: the file (a query worker that has just sent its last row, a page of the workbench).
LOCK_WAIT = 3.0
#: How long a reader that finds the tables stale waits while a live process says it has
#: writes to patch into them (:func:`mark_pending`: ``kg serve``'s keeper), before SPARQL
#: answers: the wait ends when the patch does (well under a second for a status change,
#: but a few seconds on a busy machine, where 3 s was once too short).
PENDING_WAIT = 15.0


def _pending(path: Path) -> Path:
    return path.with_name(path.name + ".pending")


def mark_pending(path: Path, pending: bool) -> None:
    """Say beside the analytics file at ``path`` that this process has writes to patch into
    it (``kg serve``'s background keeper), or no longer has: a reader that finds the tables
    stale meanwhile waits for the patch (:func:`wait_pending`)."""
    marker = _pending(path)
    if pending:
        if not marker.exists():
            marker.write_text(str(os.getpid()), encoding="ascii")
    else:
        marker.unlink(missing_ok=True)


def wait_pending(path: Path, timeout: float = PENDING_WAIT) -> bool:
    """Wait up to ``timeout`` seconds while a live process has writes to patch into the file
    at ``path``; whether one had (the tables are then worth a second look)."""
    marker = _pending(path)
    deadline = time.monotonic() + timeout
    waited = False
    while True:
        try:
            pid = int(marker.read_text(encoding="ascii") or 0)
        except (OSError, ValueError):
            return waited
        try:
            os.kill(pid, 0)
        except OSError:  # its process is gone: nothing will come
            return waited
        if time.monotonic() >= deadline:
            return waited
        waited = True
        time.sleep(0.05)


#: What DuckDB says when the file is open elsewhere in a way that excludes this opening:
#: another process's lock, or in this process a connection of the other kind (read-only
#: against writable).
_HELD = ("lock", "different configuration")


def connect(path: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the analytics file; times are shown in UTC. Raises AnalyticsError. A reader
    waits a while for a write to end (:data:`WRITING`, :data:`LOCK_WAIT`), and a writer as
    long for the readers to close the file."""
    if read_only and WRITING.acquire(timeout=WRITE_WAIT):
        WRITING.release()
    duck = engine()
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            con: duckdb.DuckDBPyConnection = duck.connect(str(path), read_only=read_only)
            break
        except duck.Error as exc:
            if not any(word in str(exc).lower() for word in _HELD):
                raise AnalyticsError(
                    f"cannot open the analytics file {path}: {exc}",
                    hint="Run `kg analytics build --full` to make it again from the graph.",
                ) from None
            if time.monotonic() >= deadline:
                raise _lock_error(path, exc) from None
            time.sleep(0.05)
    con.execute("SET TimeZone = 'UTC'")
    # DuckDB draws a progress bar on stdout for a query past two seconds: in the middle
    # of the rows kg query writes there (JSON Lines, CSV) when they go to a pipe.
    con.execute("SET enable_progress_bar = false")
    return con


def temp_table(con: duckdb.DuckDBPyConnection, name: str, columns: dict[str, tuple[str, list[Any]]]) -> None:
    """A temporary table ``name`` of ``columns`` (each a SQL type and its values, one per
    row), made by DuckDB from the Python lists: no Arrow table, as importing pyarrow and
    numpy costs a write of a few facts a tenth of a second."""
    select = ", ".join(f'unnest(CAST(${column} AS {kind}[])) AS "{column}"' for column, (kind, _v) in columns.items())
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {select}",
                {column: values for column, (_k, values) in columns.items()})


def identity(path: Path) -> list[int] | None:
    """What tells a file from the same file changed or made again (None: there is none)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def store_dir(spec: str | None) -> Path | None:
    """The directory of the embedded store ``spec`` names (None for :memory: or an endpoint)."""
    from kg.store import store_spec

    value = store_spec(spec)
    if value == ":memory:" or value.startswith(("http://", "https://")):
        return None
    return Path(value).expanduser()


def current_view(store_dir: Path) -> str | None:
    """The state of the current view of the embedded store in ``store_dir`` (what a reader
    opened now reads: kg.store.folder), or None when a write may not be in a view yet (or there is
    no view)."""
    from kg.store.folder import StoreFolder

    folder = StoreFolder(store_dir)
    return None if folder.views_stale() else folder.current_state()


# -- the graphs and their signatures ----------------------------------------------------


def staged_graphs(graphs: Iterable[ox.NamedNode]) -> list[ox.NamedNode]:
    """The graphs analytics reads: all but the ontology and the provenance records."""
    return [g for g in graphs if g not in (ONTOLOGY, PROVENANCE)]


@dataclass(frozen=True)
class GraphState:
    """What the provenance graph says about one named graph, as a comparable signature."""

    graph: str
    name: str
    priority: int
    modified: str | None
    activity: str | None
    content_hash: str | None
    triples: int | None

    @property
    def signature(self) -> str:
        if self.modified is None:
            return f"count:{self.triples}"
        return f"{self.activity}|{self.modified}|{self.content_hash}"


def _priority(name: str) -> int:
    """Where graphs disagree about a value, the lowest priority wins: the reader's own word
    first (:data:`kg.graphs.OVERRIDING`: their date or dimension of a catalog technique
    replaces the catalog's), then TechKG's own graphs in :data:`kg.graphs.SOURCES` order
    (the hand-edited catalog first), then any other graph, in an order fixed by its name."""
    import zlib

    order = [*(graph_name(g) for g in OVERRIDING), *(n for n in SOURCES if SOURCES[n] not in OVERRIDING)]
    rank = order.index(name) if name in order else len(order)
    return rank * 1_000_000 + zlib.crc32(name.encode()) % 1_000_000


def graph_states(store: GraphStore) -> dict[str, GraphState]:
    """Every graph analytics reads, with its provenance signature (cheap: no scans,
    except a COUNT for a graph that has no provenance record)."""
    graphs = staged_graphs(store.named_graphs())
    rows = store.select(
        f"""SELECT ?g ?modified ?activity ?hash ?count WHERE {{ GRAPH {PROVENANCE} {{
              ?g dcterms:modified ?modified .
              OPTIONAL {{ ?g prov:wasGeneratedBy ?activity }}
              OPTIONAL {{ ?g tkg:contentHash ?hash }}
              OPTIONAL {{ ?g tkg:tripleCount ?count }} }} }}"""
    ).records()
    recorded = {r["g"]: r for r in rows}
    out: dict[str, GraphState] = {}
    for g in graphs:
        rec = recorded.get(g.value)
        name = graph_name(g)
        if rec is None:
            out[g.value] = GraphState(
                g.value, name, _priority(name), None, None, None, store.count(g)
            )
        else:
            count = rec["count"]
            out[g.value] = GraphState(
                g.value,
                name,
                _priority(name),
                str(rec["modified"]),
                rec["activity"],
                rec["hash"],
                int(count) if count is not None else None,
            )
    return out


# -- whose layout ------------------------------------------------------------------------

#: The modules outside kg/analytics that the builder's SQL is made from (staging keys from
#: the catalog's dimensions, graph names, namespaces).
_SQL_SOURCES = ("catalog.py", "graphs.py", "vocab.py")


@cache
def code_digest() -> str:
    """A digest of the source of kg/analytics and of the modules its SQL is made from:
    equal digests, equal SQL (a few milliseconds: the files are read, not imported)."""
    import hashlib

    package = Path(__file__).resolve().parent.parent
    files = sorted((package / "analytics").glob("*.py")) + [package / name for name in _SQL_SOURCES]
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.relative_to(package).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def record_code(con: duckdb.DuckDBPyConnection) -> None:
    """Write this code's digest into a file whose layout the builder found its own (once:
    a file left as it was is not written to)."""
    rows = con.execute("SELECT value FROM staging.meta WHERE key = 'code_digest'").fetchall()
    if rows != [(code_digest(),)]:
        con.execute("INSERT OR REPLACE INTO staging.meta VALUES ('code_digest', ?)", [code_digest()])
