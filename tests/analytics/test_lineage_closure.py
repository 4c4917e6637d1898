"""lineage_closure walks pairs, not paths: a lineage with many paths between two techniques
(2^40 here) is closed in moments, each pair with its shortest and longest distance and the
graphs of the edges on its paths."""

from __future__ import annotations

import time

import duckdb

from kg.analytics.tables import table

LEVELS = 40


def test_a_lineage_with_exponentially_many_paths_is_closed_at_once() -> None:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE lineage_edges (child VARCHAR, parent VARCHAR, source_graph VARCHAR, "
                "source_modified TIMESTAMP)")
    # a ladder: each level's two techniques derive from both of the next level's, and a
    # shortcut from the bottom to the top in a graph of its own
    rows = [(f"t{level}{a}", f"t{level + 1}{b}", "catalog", "2026-01-01") for level in range(LEVELS)
            for a in "ab" for b in "ab"]
    rows.append(("t0a", f"t{LEVELS}a", "reading-decisions", "2026-02-01"))
    con.executemany("INSERT INTO lineage_edges VALUES (?, ?, ?, ?)", rows)
    start = time.perf_counter()
    closure = {(t, a): rest for t, a, *rest in con.execute(table("lineage_closure").sql).fetchall()}
    assert time.perf_counter() - start < 30
    assert len(closure) == sum(2 * 2 * (LEVELS - level) for level in range(LEVELS))  # every (lower, upper) pair
    low, high, graphs, modified = closure[("t0a", f"t{LEVELS}a")]
    assert (low, high) == (1, LEVELS) and graphs == "catalog, reading-decisions"
    assert str(modified).startswith("2026-02-01")
    assert closure[("t0b", f"t{LEVELS}a")][:3] == [LEVELS, LEVELS, "catalog"]
    assert ("t0a", "t0a") not in closure
