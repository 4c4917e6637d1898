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


def _reaches(edges: set[tuple[str, str]]) -> dict[str, set[str]]:
    """Each node's ancestors (one edge or more) by a plain search."""
    parents: dict[str, set[str]] = {}
    for child, parent in edges:
        parents.setdefault(child, set()).add(parent)
    found: dict[str, set[str]] = {}
    for node in {n for e in edges for n in e}:
        seen, todo = set(), list(parents.get(node, ()))
        while todo:
            up = todo.pop()
            if up not in seen:
                seen.add(up)
                todo += parents.get(up, ())
        found[node] = seen
    return found


def test_each_pair_lists_the_graphs_of_every_edge_on_a_walk_between_them() -> None:
    """On a random lineage in four graphs, with a cycle: an edge x -> y counts for (t, a)
    where t is x or reaches it, and y is a or reaches it; the time is the latest of theirs."""
    import random

    rng = random.Random(7)
    nodes = [f"n{i:02}" for i in range(40)]
    graphs = {"catalog": "2026-01-01", "decisions": "2026-03-01", "imports": "2026-02-01", "zotero": "2026-01-15"}
    stated = {(nodes[i], nodes[j], rng.choice(sorted(graphs))) for i in range(40) for j in range(i + 1, 40)
              if rng.random() < 0.08}
    stated |= {("n30", "n05", "decisions")}  # a cycle, as a reader's decision may make one
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE lineage_edges (child VARCHAR, parent VARCHAR, source_graph VARCHAR, "
                "source_modified TIMESTAMP)")
    con.executemany("INSERT INTO lineage_edges VALUES (?, ?, ?, ?)", [(c, p, g, graphs[g]) for c, p, g in stated])
    closure = {(t, a): rest for t, a, *rest in con.execute(table("lineage_closure").sql).fetchall()}
    edges = {(c, p) for c, p, _g in stated}
    up = _reaches(edges)
    # an edge stated by several graphs counts as the first by name, at the latest time of them
    first = {(c, p): min(g for c2, p2, g in stated if (c2, p2) == (c, p)) for c, p in edges}
    latest = {(c, p): max(graphs[g] for c2, p2, g in stated if (c2, p2) == (c, p)) for c, p in edges}
    expected = {}
    for t in up:
        for a in up[t] - {t}:
            on = [e for e in edges if (e[0] == t or e[0] in up[t]) and (e[1] == a or a in up[e[1]])]
            expected[(t, a)] = (", ".join(sorted({first[e] for e in on})), max(latest[e] for e in on))
    assert {pair: (g, str(m)[:10]) for pair, (_low, _high, g, m) in closure.items()} == expected
    assert len({g for g, _m in expected.values()}) > 3  # pairs with one graph, and pairs with several
