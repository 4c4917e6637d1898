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

After other changes that were compared (an import of new papers, with the links ``kg link``
made for them), the tables of :data:`BY_SUBJECT`, whose rows each read only the facts of
one subject (a paper, a person) and of the nodes it owns, lose the rows of the subjects
whose facts changed and get them again the same way (:func:`changed_subjects` finds
them). At 700k papers, an import of 1,000 papers patched ``papers``, ``authorship``,
``suggest_papers`` and ``citations`` in 1.0 s, against 3.4 s made whole. The tables built
from them are made whole, after them, but for those of :data:`DERIVED_BY_PAPER`, patched for
the papers whose rows of the tables they read may differ.

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

__all__ = ["BY_SUBJECT", "DERIVED_BY_PAPER", "GROWN", "OWN_FACTS_ONLY", "PATCH_SUBJECTS", "Steps", "affected",
           "changed_subjects", "patch_table", "touch_modified"]

#: The tables whose rows each read only the facts of one subject, named by the column here, and
#: of the nodes that subject owns: a paper's author list (``bibo:authorList``), a citing paper's
#: citation nodes (``cito:hasCitingEntity``); see :func:`changed_subjects`.
BY_SUBJECT: dict[str, str] = {
    "papers": "paper", "authors": "person", "authorship": "paper", "affiliations": "person",
    "paper_techniques": "paper", "paper_reading_categories": "paper", "citations": "citing",
    "citation_counts": "paper", "citation_evidence": "citing", "paper_recommendations": "paper",
    "suggest_papers": "paper", "suggest_reading": "paper",
}
#: Of those, the tables whose rows read only the facts of their own subject: the facts they read
#: are narrowed to the subjects (papers at 700k: 0.09 s, against 0.64 s narrowed at the end).
OWN_FACTS_ONLY = frozenset({"papers", "authors", "affiliations", "paper_reading_categories", "citation_counts",
                            "citation_evidence", "paper_recommendations", "suggest_papers", "suggest_reading"})
#: A build patches those tables for at most this many changed subjects; for more, it makes them whole.
PATCH_SUBJECTS = 50_000
#: Tables made from tables of :data:`BY_SUBJECT`, whose rows each read one paper's rows of them and
#: the rows of what that paper names there (its authors' affiliations), by the column here: patched
#: for the changed subjects and the papers those name in the SQL given (the papers of an author
#: whose affiliations changed), where no table they read was made whole and changed. At 700k papers,
#: ``paper_organisations`` after an import of 1,000 papers: 0.1 s, against 0.6 s made whole.
DERIVED_BY_PAPER: dict[str, tuple[str, str]] = {
    "paper_organisations": ("paper", "SELECT paper FROM main.authorship WHERE list_contains(CAST($values AS "
                                     "VARCHAR[]), person)"),
}
#: Tables that count pairs in a table of :data:`DERIVED_BY_PAPER` (its name), by key columns, in
#: a count column (with the least source graph and the latest modification): where its patch only
#: added rows (every row it had for the papers patched is there as it was, and no other row got a
#: new modification time), the pairs of the rows that came are added to the counts; else the table
#: is made whole. At 700k papers, ``organisation_coauthorship`` after an import of 1,000 papers by
#: authors the store has: 0.05 s, against 0.5 s made whole.
GROWN: dict[str, tuple[str, tuple[str, ...], str]] = {
    "organisation_coauthorship": ("paper_organisations", ("organisation", "with_organisation"), "papers"),
}

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


class Steps:
    """What a build does to each table of its plan, decided in build order as the tables
    before it are made (see :meth:`of`). A table made whole counts as changed unless it came
    out as it was (:meth:`done`): those after it that read nothing else that changed are then
    left as they are, or patched rather than made whole. At 700k papers, after an import of
    1,000 papers whose authors' restated names make ``techniques`` again, unchanged: the
    lineage and technique tables after it are left as they are."""

    def __init__(self, direct: set[str], keys: set[str], papers: Sequence[str] | None,
                 subjects: Sequence[str] | None = None, whole: set[str] | frozenset[str] = frozenset()) -> None:
        #: the tables in the plan for their own sake (they read a kind of fact that changed,
        #: or hold rows from a graph read again); the others are there for a table they read
        self.direct, self.keys, self.papers, self.subjects, self.whole = direct, keys, papers, subjects, whole
        self.made: set[str] = set()  # made whole, and not found as they were
        self.patched: set[str] = set()
        self.moved: set[str] = set()  # patched, and other rows of theirs got a new modification time

    def needed(self, table: Table) -> bool:
        """Whether ``table`` must be made or patched at all: it is in the plan for its own
        sake, or a table it reads changed."""
        return table.name in self.direct or bool(set(table.after) & (self.made | self.patched))

    def of(self, table: Table) -> tuple[str, Sequence[str]] | None:
        """What to do to ``table``: make it whole (None), or make again the rows whose column
        (the first) holds one of the values (the second). A table is patched for ``papers``
        (the papers whose reading state changed) when it says which paper each row is about,
        the kinds of fact it reads that changed are reading state, and every table it reads
        is patched or holds the events of these papers (``reading_events``, made whole). Else
        a table of :data:`BY_SUBJECT` is patched for ``subjects`` (the subjects whose rows a
        change may alter), and one of :data:`DERIVED_BY_PAPER` too where no table it reads
        was made whole and changed; one of :data:`GROWN` is grown from such a patch where no
        other row of it got a new modification time (:func:`patch_table` may find that it
        cannot). Any other table, and those in
        ``whole`` (not there yet), is made whole."""
        subjects, papers = self.subjects, self.papers
        if table.name in self.whole:
            return None
        if (papers is not None and len(papers) <= PATCH_PAPERS and table.by_paper is not None
                and table.keys & self.keys <= STATUS_KEYS
                and all(dep not in self.made or _events_only(dep) for dep in table.after)):
            return table.by_paper, papers
        if subjects is not None and len(subjects) <= PATCH_SUBJECTS:
            if table.name in BY_SUBJECT and not table.after:
                return BY_SUBJECT[table.name], subjects
            if table.name in DERIVED_BY_PAPER and not set(table.after) & self.made:
                return DERIVED_BY_PAPER[table.name][0], subjects
        source = GROWN[table.name][0] if table.name in GROWN else None
        if source in self.patched and source not in self.moved and not set(table.after) & self.made:
            return source, ()
        return None

    def done(self, table: Table, *, patched: bool, changed: bool = True, moved: bool = False) -> None:
        """Record what became of ``table``: patched (``moved``: other rows of it got a new
        modification time), or made whole (``changed``: not as it was)."""
        if patched:
            self.patched.add(table.name)
            if moved:
                self.moved.add(table.name)
        elif changed:
            self.made.add(table.name)


def changed_subjects(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The subjects whose rows in the tables of :data:`BY_SUBJECT` the facts that came and
    went (``facts_changed``) may alter: their subjects, their objects that are nodes (a
    technique's primary paper is a paper's row), the papers whose author lists, and the
    citing papers whose citation nodes, are among these."""
    return [r[0] for r in con.execute("""
        WITH c AS (SELECT s FROM facts_changed UNION SELECT o FROM facts_changed WHERE d IS NULL OR d = '_')
        SELECT s FROM c WHERE s IS NOT NULL
        UNION SELECT f.s FROM staging.facts AS f WHERE f.k = 'bibo:authorList' AND f.o IN (SELECT s FROM c)
        UNION SELECT f.o FROM staging.facts AS f WHERE f.k = 'cito:hasCitingEntity' AND f.s IN (SELECT s FROM c)
        ORDER BY 1""").fetchall()]


def _events_only(name: str) -> bool:
    """Whether the table holds reading events only (a paper's rows made from its own events)."""
    return name == "reading_events"


def patch_table(con: duckdb.DuckDBPyConnection, table: Table, column: str, values: Sequence[str]) -> int | None:
    """The rows of ``table`` whose ``column`` holds one of ``values`` made again from its SQL
    narrowed to them (a table of :data:`GROWN`: grown from its source's patch); how many rows
    the table has now, or None where it must be made whole instead."""
    if table.name in GROWN:
        return _grow(con, table, *GROWN[table.name])
    mine = f'list_contains(CAST($values AS VARCHAR[]), "{column}")'
    if table.name in DERIVED_BY_PAPER:  # (and the papers the subjects name; its rows kept for a table grown from it)
        named = con.execute(DERIVED_BY_PAPER[table.name][1], {"values": list(values)}).fetchall()
        values = sorted({*values, *(r[0] for r in named)})
        con.execute(f"CREATE OR REPLACE TEMP TABLE patched_{table.name} AS SELECT * FROM main.{table.name} "
                    f"WHERE {mine}", {"values": list(values)})
    con.execute(f"DELETE FROM main.{table.name} WHERE {mine}", {"values": list(values)})
    pause_point("analytics-patch")  # (a kill here: the transaction never commits, the file is as it was)
    sql = table.sql
    if table.name in OWN_FACTS_ONLY:
        for facts in ("staging.ranked", "staging.facts"):
            sql = sql.replace(facts, f"(SELECT * FROM {facts} WHERE s IN (SELECT unnest(CAST($values AS VARCHAR[]))))")
    con.execute(f"INSERT INTO main.{table.name} SELECT * FROM ({sql}) AS patch WHERE {mine}", {"values": list(values)})
    if table.name in DERIVED_BY_PAPER:
        con.execute(f"CREATE OR REPLACE TEMP TABLE patched_{table.name}_values AS SELECT unnest(CAST($values AS "
                    "VARCHAR[])) AS v", {"values": list(values)})
    return _count(con, table.name)


def _count(con: duckdb.DuckDBPyConnection, name: str) -> int:
    found = con.execute(f"SELECT count(*) FROM main.{name}").fetchall()
    return int(found[0][0]) if found else 0


def _grow(con: duckdb.DuckDBPyConnection, table: Table, source: str, keys: tuple[str, ...], count: str) -> int | None:
    """``table`` (of :data:`GROWN`) with the pairs of the rows its ``source`` patch added, or None
    where a row of the papers patched went or changed there."""
    if f"FROM {source}" not in table.sql:
        return None
    column = DERIVED_BY_PAPER[source][0]
    now = f'(SELECT * FROM main.{source} WHERE "{column}" IN (SELECT v FROM patched_{source}_values))'
    went = con.execute(f"SELECT count(*) FROM (SELECT * FROM patched_{source} EXCEPT SELECT * FROM {now})").fetchall()
    if went[0][0]:
        return None

    def same(a: str, b: str) -> str:
        return " AND ".join(f"{a}.{k} IS NOT DISTINCT FROM {b}.{k}" for k in keys)

    con.execute(f"""CREATE OR REPLACE TEMP TABLE grown AS
                    SELECT n.* REPLACE (n.{count} - coalesce(b.{count}, 0) AS {count})
                    FROM ({table.sql.replace(f"FROM {source}", f"FROM {now}")}) AS n
                    LEFT JOIN ({table.sql.replace(f"FROM {source}", f"FROM patched_{source}")}) AS b
                    ON {same("b", "n")}""")
    mine = same("t", "g")
    con.execute(f"""UPDATE main.{table.name} AS t SET {count} = t.{count} + g.{count},
                        source_graph = least(t.source_graph, g.source_graph),
                        source_modified = greatest(t.source_modified, g.source_modified)
                    FROM grown AS g WHERE g.{count} > 0 AND {mine}""")
    con.execute(f"""INSERT INTO main.{table.name} SELECT g.* FROM grown AS g
                    WHERE g.{count} > 0 AND NOT EXISTS (SELECT 1 FROM main.{table.name} AS t WHERE {mine})""")
    con.execute("DROP TABLE grown")
    return _count(con, table.name)


def touch_modified(con: duckdb.DuckDBPyConnection, tables: Sequence[str], graph_ids: Sequence[int]) -> int:
    """In ``tables`` (kept, not made whole), the rows from the graphs ``graph_ids`` get
    their graphs' modification time as staged now; how many rows did."""
    touched = 0
    for name in tables:
        found = con.execute(f"""UPDATE main.{name} AS t SET source_modified = gr.modified FROM staging.graphs AS gr
                        WHERE gr.id IN (SELECT unnest(CAST($ids AS INTEGER[]))) AND t.source_graph = gr.name
                          AND t.source_modified IS DISTINCT FROM gr.modified""", {"ids": list(graph_ids)}).fetchall()
        touched += int(found[0][0]) if found else 0
    return touched
