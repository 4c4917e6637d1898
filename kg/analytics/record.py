"""What an analytics build records beside the tables: each graph as staged, each table's
row count and source graphs (the graphs that hold a kind of fact it reads, its own and
those of the tables it reads), and one row per build (:mod:`kg.analytics.materialize`)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kg.analytics.files import temp_table
from kg.analytics.tables import SHARED_KEYS, TABLES

if TYPE_CHECKING:
    import duckdb

    from kg.analytics.files import GraphState
    from kg.store.base import GraphStore
    from kg.store.copies import ImportCopy

__all__ = ["contributions", "record_build", "record_graphs", "recorded_sources", "scalar", "table_counts"]


def contributions(
    con: duckdb.DuckDBPyConnection, graphs: list[str] | None, tables: list[str] | None = None
) -> dict[str, set[str]]:
    """table → the graphs that hold facts it reads, among ``graphs`` (all when None),
    for ``tables`` (all when None)."""
    chosen = [t for t in TABLES if tables is None or t.name in tables]
    keys = [(t.name, k, k in SHARED_KEYS) for t in chosen for k in sorted(t.keys)]
    classes = [(t.name, k) for t in chosen for k in sorted(t.classes)]
    temp_table(con, "table_keys", {"tbl": ("VARCHAR", [r[0] for r in keys]), "k": ("VARCHAR", [r[1] for r in keys]),
                                   "shared": ("BOOLEAN", [r[2] for r in keys])})
    temp_table(con, "table_classes", {"tbl": ("VARCHAR", [r[0] for r in classes]),
                                      "k": ("VARCHAR", [r[1] for r in classes])})
    where = (
        "TRUE"
        if graphs is None
        else "f.g IN (SELECT id FROM staging.graphs "
        "WHERE graph IN (SELECT unnest($graphs::VARCHAR[])))"
    )
    params = {} if graphs is None else {"graphs": graphs}
    try:
        rows = con.execute(
            f"""
            WITH keys AS (SELECT tbl, CAST(k AS staging.fact_key) AS k, shared FROM table_keys),
              classes AS (SELECT tbl, CAST(k AS staging.fact_key) AS k FROM table_classes),
              found AS (
                SELECT DISTINCT tk.tbl, p.g
                FROM (SELECT DISTINCT g, k FROM staging.facts AS f WHERE {where}) AS p
                JOIN keys AS tk ON tk.k = p.k
                WHERE NOT tk.shared
                UNION
                SELECT DISTINCT tk.tbl, f.g
                FROM staging.facts AS f JOIN keys AS tk ON tk.k = f.k AND tk.shared
                SEMI JOIN (SELECT c.s, tc.tbl FROM staging.facts AS c
                           JOIN classes AS tc ON tc.k = c.k) AS typed
                  ON typed.s = f.s AND typed.tbl = tk.tbl
                WHERE {where})
            SELECT found.tbl, gr.graph FROM found JOIN staging.graphs AS gr ON gr.id = found.g""",
            params,
        ).fetchall()
    finally:
        con.execute("DROP TABLE IF EXISTS table_keys")
        con.execute("DROP TABLE IF EXISTS table_classes")
    out: dict[str, set[str]] = {}
    for tbl, g in rows:
        out.setdefault(tbl, set()).add(g)
    return out


def recorded_sources(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """Each table's recorded source graphs (names)."""
    return {name: set(graphs or []) for name, graphs in con.execute(
        "SELECT table_name, sources FROM main.materialisations").fetchall()}


def record_graphs(
    con: duckdb.DuckDBPyConnection,
    states: list[GraphState],
    ids: dict[str, int],
    at: dt.datetime,
    copies: Mapping[str, ImportCopy],
) -> None:
    if not states:
        return
    temp_table(con, "new_graphs", {
        "id": ("INTEGER", [ids[s.graph] for s in states]), "graph": ("VARCHAR", [s.graph for s in states]),
        "name": ("VARCHAR", [s.name for s in states]), "priority": ("BIGINT", [s.priority for s in states]),
        "modified": ("VARCHAR", [s.modified for s in states]), "activity": ("VARCHAR", [s.activity for s in states]),
        "content_hash": ("VARCHAR", [s.content_hash for s in states]),
        "triples": ("BIGINT", [s.triples for s in states]), "signature": ("VARCHAR", [s.signature for s in states]),
        "copy_digest": ("VARCHAR", [copies[s.graph].digest if s.graph in copies else None for s in states])})
    try:
        con.execute(
            """INSERT INTO staging.graphs
               SELECT id, graph, name, priority, kg_time(modified), activity, content_hash,
                      triples, signature, 0, ?, copy_digest FROM new_graphs""",
            [at],
        )
    finally:
        con.execute("DROP TABLE IF EXISTS new_graphs")


def record_build(
    con: duckdb.DuckDBPyConnection,
    store: GraphStore,
    names: dict[str, str],
    contributions: dict[str, set[str]],
    rebuilt: dict[str, int],
    tables_patched: dict[str, int],
    touched: list[str],
    mode: str,
    reason: str,
    staged: int,
    started: float,
    started_at: dt.datetime,
    partial: set[str] | frozenset[str] = frozenset(),
) -> None:
    """Record the build. ``contributions``: each table made or patched, with the graphs
    (IRIs) that hold a kind of fact it reads, among all graphs, or for the tables in
    ``partial`` among the ``touched`` ones (the others' share is as recorded)."""
    build_id = scalar(con, "SELECT coalesce(max(build_id), 0) + 1 FROM main.builds")
    finished_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    by_name = {t.name: t for t in TABLES}

    recorded = {
        name: set(graphs)
        for name, graphs in con.execute(
            "SELECT table_name, sources FROM main.materialisations"
        ).fetchall()
    }

    def sources(name: str) -> set[str]:
        """Graph names: the table's own, and those of the tables it reads."""
        out = {names[g] for g in contributions.get(name, set())}
        if name in partial:  # (what the untouched graphs gave it is as recorded, with its tables' share)
            out |= recorded.get(name, set()) - {names[g] for g in touched}
        for dep in by_name[name].after:
            out |= sources(dep) if dep in rebuilt or dep in tables_patched else recorded.get(dep, set())
        return out

    built = list(rebuilt)
    temp_table(con, "built", {"table_name": ("VARCHAR", built),
                              "description": ("VARCHAR", [by_name[n].description for n in built]),
                              "rows": ("BIGINT", [rebuilt[n] for n in built]),
                              "sources": ("VARCHAR[]", [sorted(sources(n)) for n in built])})
    try:
        con.execute(
            "DELETE FROM main.materialisations WHERE table_name IN (SELECT table_name FROM built)"
        )
        con.execute(
            "INSERT INTO main.materialisations SELECT table_name, description, rows, ?, ?, sources "
            "FROM built",
            [build_id, finished_at],
        )
    finally:
        con.execute("DROP TABLE IF EXISTS built")
    for name, rows in tables_patched.items():
        con.execute("UPDATE main.materialisations SET rows = ?, build_id = ?, built_at = ?, sources = ? "
                    "WHERE table_name = ?", [rows, build_id, finished_at, sorted(sources(name)), name])
    con.execute(
        "INSERT INTO main.builds SELECT ?, ?, ?, ?, ?, ?, ?, ?::VARCHAR[], ?::VARCHAR[], ?",
        [
            build_id,
            started_at,
            finished_at,
            round(time.perf_counter() - started, 3),
            mode,
            reason or None,
            store.location,
            [names[g] for g in touched],
            [*built, *tables_patched],
            staged,
        ],
    )
    con.execute(
        """CREATE OR REPLACE TABLE main.graphs AS
           SELECT name AS graph, graph AS iri, modified, activity, content_hash, triples, facts,
                  staged_at
           FROM staging.graphs ORDER BY priority"""
    )


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> int:
    """The one integer ``sql`` returns (the result is read to the end, as DuckDB asks)."""
    rows = con.execute(sql, params or []).fetchall()
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    rows = con.execute(
        "SELECT table_name, rows FROM main.materialisations ORDER BY table_name"
    ).fetchall()
    return {name: int(n) for name, n in rows}
