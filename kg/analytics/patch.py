"""Tables patched after reading-status changes: only the rows of the papers whose reading
state changed are made again.

An incremental build that compared the old and new facts of the graphs it read again
(:data:`kg.analytics.materialize.COMPARE_FACTS`: the reading graph after ``kg reading
set``) knows the kinds of fact that changed and the papers whose reading state did. A
table that reads none of those kinds is left as it is. A table whose rows each show one
paper's reading state (:attr:`kg.analytics.tables.Table.by_paper`: ``reading_state``,
``suggest_reading``) and that reads no other kind of fact that changed loses the rows of
those papers and gets them again from its SQL narrowed to them: at 700k papers, a few
milliseconds against the seconds of making the reading state's 245k rows again. Every
other table is made again whole, as before. The rows that name a graph the build read
again (``source_graph``) get its new modification time (``source_modified``), so a
patched table reads as one made whole.

All of it happens in the build's transaction: a failed or killed patch leaves the file
as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kg.analytics.stored import PATCH_PAPERS, STATUS_KEYS
from kg.analytics.tables import SHARED_KEYS, TABLES, Table
from kg.pauses import pause_point

if TYPE_CHECKING:
    import duckdb

__all__ = ["affected", "patch_table", "split", "touch_modified"]

#: What a status change writes about the event that records it (kg.reading): its type, the
#: paper, the statuses, when and where. A paper's events are read by its reading state.
EVENT_KEYS = frozenset({"a:tkg:ReadingEvent", "a:tkg:ReadingRemoval", "tkg:paper", "tkg:status",
                        "tkg:previousStatus", "prov:atTime", "tkg:via"})


def affected(keys: set[str], classes: set[str] | None = None) -> set[str]:
    """The tables that read a kind of fact in ``keys`` (the kinds that changed); a shared
    kind (a name, a count: :data:`~kg.analytics.tables.SHARED_KEYS`) counts only for a
    table of one of ``classes`` (the classes of the subjects whose shared facts changed;
    None: for every table)."""
    return {t.name for t in TABLES
            if (t.keys - SHARED_KEYS) & keys
            or (t.keys & SHARED_KEYS & keys and (classes is None or t.classes & classes))}


def split(plan: Sequence[Table], keys: set[str], papers: Sequence[str] | None) -> tuple[list[Table], list[Table]]:
    """``plan`` (in build order) as the tables to make whole and those to patch for
    ``papers`` (None: patch none). A table is patched when it says which paper each row is
    about, the kinds of fact it reads that changed are reading state, and every table it
    reads is patched or holds the events of these papers (``reading_events``, made whole)."""
    if papers is None or len(papers) > PATCH_PAPERS:
        return list(plan), []
    whole: list[Table] = []
    patched: list[Table] = []
    for table in plan:
        own = table.keys & keys
        reads_ok = all(dep not in {t.name for t in whole} or _events_only(dep) for dep in table.after)
        if table.by_paper is not None and own <= STATUS_KEYS and reads_ok:
            patched.append(table)
        else:
            whole.append(table)
    return whole, patched


def _events_only(name: str) -> bool:
    """Whether the table holds reading events only (a paper's rows made from its own events)."""
    return name == "reading_events"


def patch_table(con: duckdb.DuckDBPyConnection, table: Table, papers: Sequence[str]) -> int:
    """The rows of ``papers`` in ``table`` made again from its SQL narrowed to them; how
    many rows the table has now."""
    assert table.by_paper is not None
    mine = f'list_contains(CAST($papers AS VARCHAR[]), "{table.by_paper}")'
    con.execute(f"DELETE FROM main.{table.name} WHERE {mine}", {"papers": list(papers)})
    pause_point("analytics-patch")  # (a kill here: the transaction never commits, the file is as it was)
    con.execute(f"INSERT INTO main.{table.name} SELECT * FROM ({table.sql}) AS patch WHERE {mine}",
                {"papers": list(papers)})
    found = con.execute(f"SELECT count(*) FROM main.{table.name}").fetchall()
    return int(found[0][0]) if found else 0


def touch_modified(con: duckdb.DuckDBPyConnection, tables: Sequence[str], graph_ids: Sequence[int]) -> None:
    """In ``tables`` (kept, not made whole), the rows from the graphs ``graph_ids`` get
    their graphs' modification time as staged now."""
    for name in tables:
        con.execute(f"""UPDATE main.{name} AS t SET source_modified = gr.modified FROM staging.graphs AS gr
                        WHERE gr.id IN (SELECT unnest(CAST($ids AS INTEGER[]))) AND t.source_graph = gr.name
                          AND t.source_modified IS DISTINCT FROM gr.modified""", {"ids": list(graph_ids)})
