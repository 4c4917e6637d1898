"""``kg analytics build``: the graph materialised as DuckDB tables, incrementally.

A build compares each named graph's provenance record (the activity that last wrote it,
``dcterms:modified`` and ``tkg:contentHash``; a triple count where there is none) with
the one the last build saw. Only the graphs that changed are staged again
(:mod:`kg.analytics.staging`): from the graph's import copy where the store has a valid
one (``GraphStore.import_copy``; a graph whose copy's digest differs from the one it was
last read from counts as changed), from the store otherwise. Only the tables those
graphs feed are made again, together with the tables built from them, and the answer
tables (:mod:`kg.analytics.stored`) that read a kind of fact those graphs hold or held.
A graph whose change the writes said (:attr:`kg.derived.Changes.deltas`: the links ``kg
link`` wrote) is staged from that change, not read again (:mod:`kg.analytics.delta`).
Where the graphs read again are small (:data:`COMPARE_FACTS`: the reading graph after a
status change; an import of new papers and their links), their old and new facts are
compared (:mod:`kg.analytics.changes`): only the tables and answers that read a kind of
fact that differs are touched; the rows of the papers whose status changed are patched;
beyond statuses, the tables whose rows read one subject's facts are patched for the
subjects whose facts changed (:mod:`kg.analytics.patch`), in build order, and the answers
for the items whose values changed (a fact restated by another graph changes none).
Everything happens in one DuckDB transaction: a failed or interrupted build leaves the
file as it was.

The record of what was built from what:

- ``graphs``: each named graph as last staged (its modification time, activity, hash);
- ``materialisations``: each table with its row count, build and source graphs;
- ``builds``: one row per build that changed something (mode, changed graphs, rebuilt
  tables, seconds).

A missing file, a file DuckDB cannot open, or one written by another version of this
module is rebuilt from the graph, which is the source of truth. A full build makes its
file beside the old one (``<file>.building``) and puts it in the old one's place only once
it is done: a failed or interrupted full build leaves the old file as it was.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg import scratch
from kg.analytics.changes import compare, keep_before
from kg.analytics.delta import stage_delta
from kg.analytics.files import IN_USE, WRITING, GraphState, connect, database_path, graph_states, record_code
from kg.analytics.patch import Steps, patch_table, touch_modified
from kg.analytics.patch import affected as tables_reading
from kg.analytics.record import contributions, record_build, record_graphs, recorded_sources, scalar, table_counts
from kg.analytics.schema import MACROS, schema_version
from kg.analytics.staging import KEYS, stage
from kg.analytics.tables import TABLES, Table, ordered
from kg.analytics.tables import table as table_named
from kg.errors import AnalyticsError

if TYPE_CHECKING:
    import duckdb

    from kg.derived import Delta
    from kg.store.base import GraphStore
    from kg.store.copies import ImportCopy

__all__ = [
    "BuildReport",
    "GraphState",
    "build",
    "connect",
    "database_path",
    "graph_states",
    "inspect",
    "remove_database",
]




#: The memory DuckDB may use in a build before it spills to disk (beside the file), while
#: it stages the facts (the copies' parsed batches are held beside it), ...
BUILD_MEMORY = "1GB"
#: ... and while it makes the tables and answers from them. DuckDB's own structures and
#: allocator take a few hundred megabytes more. At 700k papers (9.6M facts), back to back,
#: with the aggregates of :mod:`kg.analytics.aggregates` and the staged facts in the file:
#: 2 GB, 40.5-45.1 s and a peak of 1.8 GB; 1 GB, 44.6-49.2 s and 1.47 GB. Before them (2 GB
#: while staging, 3 GB after): 39.2-43.0 s, 2.8-3.0 GB.
TABLES_MEMORY = "2GB"


def session(con: duckdb.DuckDBPyConnection) -> None:
    """Ready a connection for the build: the term parser and the helper macros."""
    con.execute(MACROS)
    # (DuckDB takes 80% of the machine's memory by default)
    con.execute(f"SET memory_limit = '{BUILD_MEMORY}'")

SCHEMA_VERSION = schema_version()

Progress = Callable[[str, int, int], None]


@dataclass
class BuildReport:
    """What one build did."""

    path: Path
    mode: str
    reason: str = ""
    changed_graphs: list[str] = field(default_factory=list)
    rebuilt: dict[str, int] = field(default_factory=dict)
    tables: dict[str, int] = field(default_factory=dict)
    staged_facts: int = 0
    seconds: float = 0.0
    message: str = ""
    #: Seconds spent reading the graph (staging), making tables, and recording and saving.
    phases: dict[str, float] = field(default_factory=dict)
    #: The answer tables (kg.analytics.stored) made again, and their rows.
    answers: dict[str, int] = field(default_factory=dict)
    #: The answer tables patched after reading-status changes (only the rows of the papers
    #: whose status changed made again), and how many rows those papers have now.
    patched: dict[str, int] = field(default_factory=dict)
    #: The tables patched after reading-status changes (kg.analytics.patch), and their rows now.
    patched_tables: dict[str, int] = field(default_factory=dict)
    #: The graphs (of changed_graphs) read from their import copies, not from the store.
    from_copies: list[str] = field(default_factory=list)
    #: The graphs (of changed_graphs) staged from what the writes changed in them (kg.analytics.delta).
    from_changes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "mode": self.mode,
            "reason": self.reason,
            "changed_graphs": self.changed_graphs,
            "rebuilt": self.rebuilt,
            "tables": self.tables,
            "staged_facts": self.staged_facts,
            "seconds": round(self.seconds, 3),
            "phases": {k: round(v, 3) for k, v in self.phases.items()},
            "answers": self.answers,
            "patched": self.patched,
            "patched_tables": self.patched_tables,
            "from_copies": self.from_copies,
            "from_changes": self.from_changes,
            "message": self.message,
        }


def _schema_problem(con: duckdb.DuckDBPyConnection) -> str | None:
    import duckdb

    try:
        rows = con.execute("SELECT value FROM staging.meta WHERE key = 'schema_version'").fetchall()
    except duckdb.Error:
        return "outdated (no schema record)"
    found = rows[0][0] if rows else "?"
    if found != SCHEMA_VERSION:
        return f"outdated (schema {found}, expected {SCHEMA_VERSION})"
    return None


def inspect(path: Path) -> str | None:
    """Why ``path`` cannot be used as it is (missing, corrupt, outdated), or None."""
    import duckdb

    if not path.exists():
        return "missing"
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        if "lock" in str(exc).lower():
            return None  # held by a writer: it exists and opens; the writer keeps it current
        return f"corrupt ({exc})"
    try:
        return _schema_problem(con)
    finally:
        con.close()


def remove_database(path: Path) -> None:
    for victim in (path, path.with_name(path.name + ".wal")):
        victim.unlink(missing_ok=True)


def _install(built: Path, path: Path) -> None:
    """The file a full build made at ``built`` put in the place of ``path`` (a reader that
    has the old one open goes on reading it)."""
    wal = path.with_name(path.name + ".wal")
    wal.unlink(missing_ok=True)
    os.replace(built, path)
    built_wal = built.with_name(built.name + ".wal")
    if built_wal.exists():
        os.replace(built_wal, wal)


_SETUP = f"""
CREATE SCHEMA IF NOT EXISTS staging;
CREATE TABLE IF NOT EXISTS staging.meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TYPE staging.fact_key AS ENUM ({", ".join(f"'{k}'" for k in KEYS)});
CREATE TABLE IF NOT EXISTS staging.facts (
  g INTEGER, s VARCHAR, k staging.fact_key, o VARCHAR, n INTEGER, d VARCHAR);
CREATE TABLE IF NOT EXISTS staging.graphs (
  id INTEGER PRIMARY KEY, graph VARCHAR UNIQUE, name VARCHAR, priority BIGINT, modified TIMESTAMP,
  activity VARCHAR, content_hash VARCHAR, triples BIGINT, signature VARCHAR, facts BIGINT,
  staged_at TIMESTAMP, copy_digest VARCHAR);
CREATE OR REPLACE VIEW staging.ranked AS
  SELECT f.g, f.s, f.k, f.o, f.n, f.d, gr.priority, gr.name AS graph_name, gr.modified AS graph_modified
  FROM staging.facts AS f JOIN staging.graphs AS gr ON gr.id = f.g;
CREATE TABLE IF NOT EXISTS main.materialisations (
  table_name VARCHAR PRIMARY KEY, description VARCHAR, rows BIGINT, build_id BIGINT,
  built_at TIMESTAMP,
  sources VARCHAR[]);
CREATE TABLE IF NOT EXISTS main.builds (
  build_id BIGINT, started_at TIMESTAMP, finished_at TIMESTAMP, seconds DOUBLE, mode VARCHAR,
  reason VARCHAR, store VARCHAR, changed_graphs VARCHAR[], rebuilt_tables VARCHAR[],
  staged_facts BIGINT);
INSERT OR REPLACE INTO staging.meta VALUES ('schema_version', '{SCHEMA_VERSION}');
"""


def _fresh(path: Path) -> duckdb.DuckDBPyConnection:
    remove_database(path)
    con = connect(path, read_only=False)
    session(con)
    con.execute(_SETUP)
    return con


def _building(path: Path) -> Path:
    """Where a full build makes the file, to take the place of ``path`` once it is done."""
    return path.with_name(path.name + ".building")


def _open_for_build(path: Path, full: bool) -> tuple[duckdb.DuckDBPyConnection, Path, str, str]:
    """A writable connection, the file it is to (``path``, or for a full build the file
    that replaces it when done), the reason for a full build ("" if none) and a message."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if full or not path.exists():
        return _fresh(_building(path)), _building(path), ("requested" if full else "missing"), ""
    try:
        con = connect(path, read_only=False)
    except AnalyticsError as exc:
        if IN_USE in exc.message:
            raise
        problem: str | None = f"corrupt ({exc.message.rsplit(': ', 1)[-1]})"
    else:
        problem = _schema_problem(con)
        if problem is None:
            session(con)
            return con, path, "", ""
        con.close()
    assert problem is not None
    message = f"the analytics file {path} is {problem}; rebuilding it from the graph"
    return _fresh(_building(path)), _building(path), problem.split(" ", 1)[0], message


def _existing_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
    ).fetchall()
    return {r[0] for r in rows}


def build(
    store: GraphStore,
    path: Path,
    *,
    full: bool = False,
    workers: int | None = None,
    progress: Progress | None = None,
    deltas: Mapping[str, Delta] | None = None,
) -> BuildReport:
    """Bring the analytics file at ``path`` up to date with ``store``; see the module doc.
    Readers of this process wait for it (:data:`kg.analytics.files.WRITING`). ``deltas``:
    what writes since the file last held the store's state changed in some graphs, each
    staged from its change instead of read again whole (:mod:`kg.analytics.delta`)."""
    with WRITING:
        return _build_file(store, path, full=full, workers=workers, progress=progress, deltas=deltas or {})


def _build_file(store: GraphStore, path: Path, *, full: bool, workers: int | None,
                progress: Progress | None, deltas: Mapping[str, Delta]) -> BuildReport:
    import duckdb

    started = time.perf_counter()
    con, target, reason, message = _open_for_build(path, full)
    done = False
    try:
        report = _build(con, store, path, reason, workers, progress, deltas)
        report.message = message
        done = True
    except duckdb.Error as exc:
        raise AnalyticsError(
            f"building the analytics file {path} failed: {exc}",
            hint="The file is unchanged. Run `kg analytics build --full` to start afresh.",
        ) from None
    finally:
        con.close()
        if target != path:  # a full build: the new file takes the old one's place only when done
            if done:
                _install(target, path)
            else:
                remove_database(target)
    report.seconds = time.perf_counter() - started
    return report


def _build(
    con: duckdb.DuckDBPyConnection,
    store: GraphStore,
    path: Path,
    reason: str,
    workers: int | None,
    progress: Progress | None,
    deltas: Mapping[str, Delta],
) -> BuildReport:
    started = time.perf_counter()
    started_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    record_code(con)  # the layout is this code's (_open_for_build): readers need not work it out
    states = graph_states(store)
    previous = {
        g: (sig, name, gid)
        for g, sig, name, gid in con.execute(
            "SELECT graph, signature, name, id FROM staging.graphs"
        ).fetchall()
    }
    copied = dict(con.execute("SELECT graph, copy_digest FROM staging.graphs WHERE copy_digest IS NOT NULL").fetchall())
    copies = _import_copies(store, states)
    # A graph is read again when its provenance changed, or when the copy it was read from
    # was replaced by another (its digest changed).
    changed = sorted(
        g
        for g, state in states.items()
        if previous.get(g, ("", "", 0))[0] != state.signature
        or (g in copied and g in copies and copies[g].digest != copied[g])
    )
    removed = sorted(set(previous) - set(states))
    names = {
        **{g: name for g, (_sig, name, _id) in previous.items()},
        **{g: s.name for g, s in states.items()},
    }
    # Each graph keeps its small integer id for as long as it exists.
    ids = {g: gid for g, (_sig, _name, gid) in previous.items()}
    for g in changed:
        ids.setdefault(g, max(ids.values(), default=0) + 1)
    from kg.analytics.stored import answers_current, materialise

    missing_tables = {t.name for t in TABLES} - _existing_tables(con)
    if not changed and not removed and not missing_tables and answers_current(con):
        return BuildReport(path, "up to date", reason, tables=table_counts(con))
    mode = "full" if (reason or not previous) else "incremental"
    touched = changed + removed
    con.execute("BEGIN TRANSACTION")
    try:
        gone = [ids[g] for g in touched]
        # The facts of the touched graphs, when they are few, kept to compare with the new ones ...
        compared = mode == "incremental" and _recorded_facts(con, gone) <= COMPARE_FACTS
        # ... else the tables fed by their old content
        affected = set(contributions(con, touched)) if previous and not compared else set()
        keys = _staged_keys(con, gone) if previous else set()  # the answer tables' inputs, old ...
        # (a graph staged before, and changed since by writes that said how: staged from that)
        deltas = {g: d for g, d in deltas.items() if mode == "incremental" and g in changed and g in previous}
        if compared or deltas:  # their old facts, to compare with the new ones or to stage the change on
            keep_before(con, gone if compared else [ids[g] for g in deltas])
        con.execute("DELETE FROM staging.facts WHERE g IN (SELECT unnest(?::INTEGER[]))", [gone])
        con.execute("DELETE FROM staging.graphs WHERE id IN (SELECT unnest(?::INTEGER[]))", [gone])
        copies = {g: copies[g] for g in changed if g in copies}
        record_graphs(con, [states[g] for g in changed], ids, started_at, copies)
        sizes = {g: states[g].triples for g in changed}
        clock = time.perf_counter()
        staged, from_changes = _stage(con, store, path, changed, ids, sizes, copies, workers, progress, deltas)
        phases = {"staging": time.perf_counter() - clock}
        clock = time.perf_counter()
        con.execute(f"SET memory_limit = '{TABLES_MEMORY}'")
        changed_ids = [ids[g] for g in changed]
        keys |= _staged_keys(con, changed_ids)  # ... and new
        found = None
        if compared and staged <= COMPARE_FACTS:  # only the kinds of fact that changed, and the papers whose state did
            found = compare(con, changed_ids, gone, [names[g] for g in touched], [ids[g] for g in from_changes])
            keys = found.keys
        if compared or deltas:
            con.execute("DROP TABLE facts_before")
            con.execute("DROP TABLE graphs_before")
            con.execute("DROP TABLE delta_changed")
        papers, classes, subjects = (found.papers, found.classes, found.subjects) if found else (None, None, None)
        # ... and by their new content (a full build makes every table: nothing to find).
        if mode == "full":
            affected = {t.name for t in TABLES}
        elif compared:  # the tables that read a kind of fact that changed (or, not compared, that was or is there),
            # and those with rows from these graphs, whose rows say when their graph changed (but for the
            # tables patched by paper: those rows are given the new time in place, below)
            read_again = {names[g] for g in touched}
            recorded = recorded_sources(con)
            affected = tables_reading(keys, classes) | {t for t, sources in recorded.items()
                                                        if sources & read_again and table_named(t).by_paper is None}
        elif changed:
            affected |= set(contributions(con, changed))
        direct = affected | missing_tables
        steps = Steps(direct, keys, papers, subjects, missing_tables)
        plan = ordered(frozenset(direct))
        rebuilt: dict[str, int] = {}
        tables_patched: dict[str, int] = {}
        for i, table in enumerate(plan):  # (in order: a table made whole reads those patched before it)
            if progress:
                progress("tables", i, len(plan))
            if not steps.needed(table):
                continue  # nothing it reads changed
            patch = steps.of(table)
            found_rows = patch_table(con, table, *patch) if patch is not None else None
            if found_rows is not None:
                tables_patched[table.name] = found_rows
                # (its rows kept from the graphs read again: their new modification time, before a
                # table made from it reads them)
                steps.done(table, patched=True, moved=touch_modified(con, [table.name], changed_ids) > 0)
                continue
            # (one here only for a table it reads, and read by a later table, may come out as it was:
            # those after it need not follow)
            if table.name in direct or not any(table.name in t.after for t in plan[i + 1 :]):
                con.execute(f"CREATE OR REPLACE TABLE main.{table.name} AS {table.sql}")
            elif not _remade(con, table):
                steps.done(table, patched=False, changed=False)
                continue
            steps.done(table, patched=False)
            rebuilt[table.name] = scalar(con, f"SELECT count(*) FROM main.{table.name}")
        if compared:  # the rows of the tables kept, from the graphs read again: the same
            kept = [t for t, sources in recorded.items()
                    if t not in rebuilt and t not in tables_patched and sources & read_again]
            touch_modified(con, kept, changed_ids)
        if progress:
            progress("tables", len(plan), len(plan))
        phases["tables"] = time.perf_counter() - clock
        clock = time.perf_counter()
        # the answers that read any kind of fact the touched graphs held or hold, or that changed
        # (all, for a full build); those that read only statuses, patched for the papers whose status changed
        answers, patched = materialise(con, progress, changed_keys=None if mode == "full" else keys, papers=papers,
                                       effective=found.effective if found else None,
                                       items=found.items if found else None)
        phases["answers"] = time.perf_counter() - clock
        clock = time.perf_counter()
        # each table's source graphs: among all (a full build, a table made for the first time), or
        # among those touched (the share of the others is as recorded)
        made = [*rebuilt, *tables_patched]
        whole = [t for t in made if mode == "full" or t in missing_tables]
        sources = {**(contributions(con, touched, [t for t in made if t not in whole]) if touched else {}),
                   **(contributions(con, None, whole) if whole else {})}
        record_build(con, store, names, sources, rebuilt, tables_patched, touched, mode, reason, staged, started,
                     started_at, partial=set(made) - set(whole))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("CHECKPOINT")
    phases["recording"] = time.perf_counter() - clock
    return BuildReport(
        path,
        mode,
        reason,
        changed_graphs=[names[g] for g in touched],
        rebuilt=rebuilt,
        patched_tables=tables_patched,
        tables=table_counts(con),
        staged_facts=staged,
        phases=phases,
        answers=answers,
        patched=patched,
        from_copies=[names[g] for g in copies],
        from_changes=[names[g] for g in from_changes],
    )


#: A table made whole in an incremental build only for a table it reads, that a later table of the
#: build reads, is made aside and compared with what it was where it had at most this many rows (it
#: is kept if it came out the same, and the tables after it need not follow).
COMPARE_ROWS = 50_000


def _remade(con: duckdb.DuckDBPyConnection, table: Table) -> bool:
    """Make ``table`` whole; whether its rows changed. One of at most :data:`COMPARE_ROWS` rows is
    made aside first, and kept as it was where it came out the same (a table of techniques after
    an import that restates their authors' names)."""
    name = table.name
    if scalar(con, f"SELECT count(*) FROM main.{name}") > COMPARE_ROWS:
        con.execute(f"CREATE OR REPLACE TABLE main.{name} AS {table.sql}")
        return True
    con.execute(f"CREATE OR REPLACE TEMP TABLE remade AS {table.sql}")
    changed = scalar(con, f"SELECT (SELECT count(*) FROM remade) <> (SELECT count(*) FROM main.{name}) OR EXISTS "
                          f"(SELECT * FROM remade EXCEPT ALL SELECT * FROM main.{name})")
    if changed:
        con.execute(f"CREATE OR REPLACE TABLE main.{name} AS SELECT * FROM remade")
    con.execute("DROP TABLE remade")
    return bool(changed)


#: Write the staged facts in key order when the rows staged in a build are at least this share of them.
CLUSTER_SHARE = 0.2


def _merge(con: duckdb.DuckDBPyConnection, staged: int) -> None:
    """Move the facts just staged (the table ``staging.staged_facts``) into ``staging.facts``,
    all of it written again in key order when the build staged much of it anew.

    Every table and answer reads the facts of a few keys (``WHERE k = ...``, ``k IN
    (...)``): in key order, DuckDB's zone maps skip the row groups of the other keys (at
    700k papers, the tables and answers took 3 s less than with the facts in the order they
    were staged). Staged apart, the facts are written to the file once, already in that
    order: at 9M facts, 3.6 s against 5.9 s for writing them and then again sorted by key
    and subject. A build that staged few rows (a status changed) appends them: the order
    of the rest still holds."""
    total = scalar(con, "SELECT count(*) FROM staging.facts") + staged
    if staged >= CLUSTER_SHARE * total:
        con.execute("SET preserve_insertion_order = true")
        try:
            con.execute("CREATE TABLE staging.facts_by_key AS SELECT * FROM "
                        "(SELECT * FROM staging.facts UNION ALL SELECT * FROM staging.staged_facts) ORDER BY k")
        finally:
            con.execute("SET preserve_insertion_order = false")
        con.execute("DROP TABLE staging.facts")
        con.execute("ALTER TABLE staging.facts_by_key RENAME TO facts")
    else:
        con.execute("INSERT INTO staging.facts SELECT * FROM staging.staged_facts")
    con.execute("DROP TABLE staging.staged_facts")


#: An incremental build compares the old and new facts of the graphs it reads again when
#: they had and have at most this many (a reading-status change: the reading graph), to
#: find which kinds of fact changed, and for which papers the status did: about a second
#: for a million facts, against the seconds of every answer made again.
COMPARE_FACTS = 1_000_000


def _recorded_facts(con: duckdb.DuckDBPyConnection, graph_ids: list[int]) -> int:
    """How many facts the graphs ``graph_ids`` had when last staged."""
    return scalar(con, "SELECT coalesce(sum(facts), 0) FROM staging.graphs WHERE id IN (SELECT unnest(?::INTEGER[]))",
                  [graph_ids])


def _staged_keys(con: duckdb.DuckDBPyConnection, graph_ids: list[int]) -> set[str]:
    """The kinds of fact (staging keys) the graphs ``graph_ids`` hold in staging.facts."""
    rows = con.execute("SELECT DISTINCT CAST(k AS VARCHAR) FROM staging.facts WHERE g IN (SELECT unnest(?::INTEGER[]))",
                       [graph_ids]).fetchall()
    return {r[0] for r in rows}


def _stage(
    con: duckdb.DuckDBPyConnection,
    store: GraphStore,
    path: Path,
    graphs: list[str],
    ids: dict[str, int],
    sizes: dict[str, int | None],
    copies: dict[str, ImportCopy],
    workers: int | None,
    progress: Progress | None,
    deltas: Mapping[str, Delta],
) -> tuple[int, list[str]]:
    """Stage the facts of ``graphs``, from their changes in ``deltas`` (:mod:`kg.analytics.delta`),
    from their import copies in ``copies`` or through TSV files in a scratch folder beside the
    file, into a temporary table first, then into ``staging.facts`` (:func:`_merge`). Returns
    how many facts were staged, and the graphs staged from their changes."""
    if not graphs:
        return 0, []
    import pyoxigraph as ox

    # A table of the file (dropped before the build commits), not a temporary one: DuckDB keeps a
    # temporary table's rows in memory until it spills them, a gigabyte at 700k papers, and
    # compresses a table's as it writes it (the build's peak at 700k papers, in 1 GB: 1.6 GB against 1.45 GB).
    con.execute("CREATE OR REPLACE TABLE staging.staged_facts AS SELECT * FROM staging.facts LIMIT 0")
    with scratch.folder(".kg-analytics-", path.parent) as folder:
        staged, whole = 0, []
        for g in graphs:
            added = stage_delta(con, store, g, ids[g], deltas[g], folder, "staging.staged_facts") \
                if g in deltas else None
            if added is None:
                whole.append(g)
            else:
                staged += added
        staged += stage(
            store,
            con,
            [ox.NamedNode(g) for g in whole],
            folder,
            ids=ids,
            sizes=sizes,
            copies=copies,
            workers=workers,
            progress=(lambda done, total: progress("staging", done, total)) if progress else None,
            table="staging.staged_facts",
        )
    _merge(con, staged)
    con.execute(
        """UPDATE staging.graphs AS gr SET facts = c.n
           FROM (SELECT g, count(*) AS n FROM staging.facts
                 WHERE g IN (SELECT unnest(?::INTEGER[])) GROUP BY g) AS c
           WHERE gr.id = c.g""",
        [[ids[g] for g in graphs]],
    )
    return staged, [g for g in deltas if g not in whole]


def _import_copies(store: GraphStore, states: Mapping[str, GraphState]) -> dict[str, ImportCopy]:
    """The valid import copies of the graphs in ``states``, by graph IRI (none on a
    remote store)."""
    import pyoxigraph as ox

    found = {g: store.import_copy(ox.NamedNode(g)) for g in states}
    return {g: c for g, c in found.items() if c is not None}
