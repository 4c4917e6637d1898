"""What changed between the facts an incremental build read again and those it had.

Where the graphs read again are small (:data:`kg.analytics.materialize.COMPARE_FACTS`),
their old facts (``facts_before``, with their graphs' priorities in ``graphs_before``)
are compared with the new ones (:func:`compare`):

- the kinds of fact that differ: only the tables and answers that read one are made again;
- the papers whose reading state differs: the tables and answers that show it are patched
  for them (:mod:`kg.analytics.patch`, :mod:`kg.analytics.stored`);
- beyond reading state, the subjects whose table rows may differ
  (:func:`kg.analytics.patch.changed_subjects`);
- and what the answers see of it. An answer reads values, not the graphs that hold them:
  the values of a subject's kind of fact (all of them, and the one the best graph gives).
  A fact restated by another graph (an import that repeats the authors and techniques it
  names) changes no answer. The kinds of fact whose values differ for some subject
  (``effective``) say which answers to touch at all, and the items whose rows may differ
  (``items``: those subjects, what they name, and what names them, with the papers whose
  author lists name them) are the rows made again.

Graphs whose very name an answer reads (your reading state and list, your techniques) are
not followed that way: where one of them changed, ``effective`` is None, and every answer
that reads a kind of fact that changed is made again or patched for statuses, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kg.analytics.patch import EVENT_KEYS, changed_subjects
from kg.analytics.stored import STATUS_KEYS
from kg.analytics.tables import SHARED_KEYS
from kg.graphs import MY_TECHNIQUES, READING, READING_LIST, graph_name

if TYPE_CHECKING:
    import duckdb

__all__ = ["NAMED_GRAPHS", "Compared", "compare", "keep_before"]

#: The graphs whose names the answers read (kg.analytics.twins).
NAMED_GRAPHS = frozenset(graph_name(g) for g in (READING_LIST, READING, MY_TECHNIQUES))


@dataclass(frozen=True)
class Compared:
    """What differs between the old and new facts of the graphs read again (see the module doc)."""

    keys: set[str]
    papers: list[str]
    classes: set[str]
    subjects: list[str] | None = None
    effective: set[str] | None = None
    items: list[str] | None = None


def keep_before(con: duckdb.DuckDBPyConnection, graph_ids: list[int]) -> None:
    """Keep the facts of ``graph_ids`` (``facts_before``), and their graphs' priorities
    (``graphs_before``), before they are read again: to compare with the new ones, or to
    stage a graph from its change (:mod:`kg.analytics.delta`), which adds the facts that came
    and went in that graph to ``delta_changed``."""
    con.execute("CREATE OR REPLACE TEMP TABLE facts_before AS SELECT g, s, k, o, n, d FROM staging.facts "
                "WHERE g IN (SELECT unnest(?::INTEGER[]))", [graph_ids])
    con.execute("CREATE OR REPLACE TEMP TABLE delta_changed AS SELECT g, s, k, o, n, d FROM staging.facts LIMIT 0")
    con.execute("CREATE OR REPLACE TEMP TABLE graphs_before AS SELECT id, priority FROM staging.graphs "
                "WHERE id IN (SELECT unnest(?::INTEGER[]))", [graph_ids])


def compare(con: duckdb.DuckDBPyConnection, graph_ids: list[int], touched_ids: list[int],
            touched_names: Sequence[str], from_changes: Sequence[int] = ()) -> Compared:
    """Between ``facts_before`` and the facts the graphs ``graph_ids`` hold now (``touched_ids``:
    those and the graphs removed); see the module doc. Of the graphs ``from_changes``, staged
    from their change, what came and went is in ``delta_changed`` already (at 700k papers, the
    links of 1,000 papers: 0.4 s less than comparing the links graph's 3M facts)."""
    whole = [g for g in graph_ids if g not in from_changes]
    now = "SELECT g, s, k, o, n, d FROM staging.facts WHERE g IN (SELECT unnest($whole::INTEGER[]))"
    before = "SELECT * FROM facts_before WHERE g NOT IN (SELECT unnest($changes::INTEGER[]))"
    con.execute(f"""CREATE OR REPLACE TEMP TABLE facts_changed AS
                    ({before} EXCEPT ALL {now})
                    UNION ALL ({now} EXCEPT ALL {before})
                    UNION ALL SELECT * FROM delta_changed""", {"whole": whole, "changes": list(from_changes)})
    try:
        keys = {r[0] for r in con.execute("SELECT DISTINCT CAST(k AS VARCHAR) FROM facts_changed").fetchall()}
        # (and the papers of the events that came or went: a paper's reading state reads its events)
        papers = [r[0] for r in con.execute(
            """SELECT s FROM facts_changed WHERE CAST(k AS VARCHAR) IN (SELECT unnest(?::VARCHAR[]))
               UNION SELECT o FROM facts_changed WHERE CAST(k AS VARCHAR) = 'tkg:paper' ORDER BY 1""",
            [sorted(STATUS_KEYS)]).fetchall()]
        # the classes of the subjects whose shared facts (names, positions, counts) changed
        classes = {r[0] for r in con.execute(
            """SELECT DISTINCT CAST(k AS VARCHAR) FROM staging.facts WHERE starts_with(CAST(k AS VARCHAR), 'a:')
               AND s IN (SELECT s FROM facts_changed WHERE CAST(k AS VARCHAR) IN (SELECT unnest(?::VARCHAR[])))""",
            [sorted(SHARED_KEYS & keys)]).fetchall()} if SHARED_KEYS & keys else set()
        if not keys - STATUS_KEYS - EVENT_KEYS:  # reading state alone: patched by paper
            return Compared(keys, papers, classes)
        subjects = changed_subjects(con)
        if NAMED_GRAPHS & set(touched_names):
            return Compared(keys, papers, classes, subjects)
        effective = _effective(con, touched_ids)
        return Compared(keys, papers, classes, subjects, effective, _items(con, effective))
    finally:  # (a failed build's rollback takes them away)
        con.execute("DROP TABLE facts_changed")
        con.execute("DROP TABLE IF EXISTS effective")


def _effective(con: duckdb.DuckDBPyConnection, touched_ids: list[int]) -> set[str]:
    """The kinds of fact whose values differ for some subject: all its values (of every graph),
    or the one the best graph gives; those subjects are kept in ``effective``."""
    con.execute("CREATE OR REPLACE TEMP TABLE pairs AS SELECT DISTINCT s, k FROM facts_changed")
    values = """SELECT s, k, list_sort(list(DISTINCT {'o': o, 'n': n, 'd': d})) AS vals,
                       arg_min({'o': o, 'd': d}, (priority, o, d)) AS pick FROM {facts} GROUP BY s, k"""
    con.execute(f"""CREATE OR REPLACE TEMP TABLE effective AS
        WITH before AS (
          SELECT f.s, f.k, f.o, f.n, f.d, gb.priority FROM facts_before AS f JOIN graphs_before AS gb ON gb.id = f.g
          SEMI JOIN pairs AS p ON p.s = f.s AND p.k = f.k
          UNION ALL
          SELECT f.s, f.k, f.o, f.n, f.d, gr.priority FROM staging.facts AS f JOIN staging.graphs AS gr ON gr.id = f.g
          SEMI JOIN pairs AS p ON p.s = f.s AND p.k = f.k
          WHERE f.g NOT IN (SELECT unnest(CAST($touched AS INTEGER[])))),
        after AS (
          SELECT f.s, f.k, f.o, f.n, f.d, gr.priority FROM staging.facts AS f JOIN staging.graphs AS gr ON gr.id = f.g
          SEMI JOIN pairs AS p ON p.s = f.s AND p.k = f.k),
        was AS ({values.replace("{facts}", "before")}),
        now AS ({values.replace("{facts}", "after")})
        SELECT p.s, CAST(p.k AS VARCHAR) AS k FROM pairs AS p
        LEFT JOIN was ON was.s = p.s AND was.k = p.k LEFT JOIN now ON now.s = p.s AND now.k = p.k
        WHERE was.vals IS DISTINCT FROM now.vals OR was.pick IS DISTINCT FROM now.pick""",
                {"touched": touched_ids})
    con.execute("DROP TABLE pairs")
    return {r[0] for r in con.execute("SELECT DISTINCT k FROM effective").fetchall()}


def _items(con: duckdb.DuckDBPyConnection, effective: set[str]) -> list[str]:
    """The items whose answer rows the values in ``effective`` (the kinds of fact whose
    values changed, for the subjects in the table ``effective``) may change: their subjects,
    the nodes those name and the subjects that name them (as they are, or were), and the
    papers whose author lists name them; through the kinds of fact read by the answers that
    read a kind in ``effective`` (the others are left as they are: a lineage decision reads
    the facts a lineage answer reads, 9 kinds, not the 54 of all answers; at 700k papers
    0.05 s against 0.3 s). (The nodes a changed item names by a fact that did not change are
    in too: no answer of today was found to need them, but one that shows a note's or a
    technique's fact on the row of the paper it names would.)"""
    from kg.analytics.stored import reads
    from kg.analytics.twins import TWINS

    read = sorted(set().union(*(kinds for twin in TWINS.values() if (kinds := reads(twin)) & effective)))
    if not read:
        return []
    nodes = f"(d IS NULL OR d = '_') AND k IN ({', '.join(repr(k) for k in read)})"
    con.execute("CREATE OR REPLACE TEMP TABLE changed_items AS SELECT DISTINCT s FROM effective")
    found: set[str] = set()
    # one part at a time: run as one UNION, DuckDB scans the facts for all of them at once,
    # and the columns it holds for that took the import of 1,000 papers at 700k to 1.06 GB
    # (against 0.76 GB; no slower)
    for part in ("SELECT s FROM changed_items",
                 f"SELECT o FROM staging.facts WHERE s IN (SELECT s FROM changed_items) AND {nodes}",
                 f"SELECT o FROM facts_changed WHERE s IN (SELECT s FROM changed_items) AND {nodes}",
                 f"SELECT s FROM staging.facts WHERE o IN (SELECT s FROM changed_items) AND {nodes}",
                 f"SELECT s FROM facts_changed WHERE o IN (SELECT s FROM changed_items) AND {nodes}",
                 """SELECT s FROM staging.facts WHERE k = 'bibo:authorList' AND o IN
                    (SELECT s FROM staging.facts WHERE k = 'rdf:_n' AND o IN (SELECT s FROM changed_items))"""):
        found.update(r[0] for r in con.execute(part).fetchall() if r[0] is not None)
    con.execute("DROP TABLE changed_items")
    return sorted(found)
