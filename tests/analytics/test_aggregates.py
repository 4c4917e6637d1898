"""The build's cheap aggregates give what the aggregates they stand for give, on groups with
ties between graphs, repeated values, NULLs and nothing at all."""

from __future__ import annotations

import duckdb
import pytest

from kg.analytics.aggregates import best, joined, pick, same_language, sorted_set

# (group, priority, k, o, d): ties on priority, equal values, a NULL value, a NULL marker
_ROWS = [
    (1, 2, "t", "b", "@en"), (1, 1, "t", "z", None), (1, 1, "t", "c", "@en"), (1, 1, "t", "c", None),
    (1, 3, "v", "x", "@en"), (1, 3, "v", "x", "@en"), (1, 3, "v", "a", "@de"),
    (2, 5, "t", "only", "@en"), (2, 5, "v", None, None),
    (3, 1, "v", None, "@en"), (3, 1, "w", "w", None),
    (4, 1, "w", "w", "@en"),
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    found = duckdb.connect()
    found.execute("CREATE TABLE f (g INTEGER, priority INTEGER, k VARCHAR, o VARCHAR, d VARCHAR)")
    found.executemany("INSERT INTO f VALUES (?, ?, ?, ?, ?)", _ROWS)
    return found


def _both(con: duckdb.DuckDBPyConnection, cheap: str, costly: str) -> tuple[list, list]:
    sql = "SELECT g, {} FROM f GROUP BY g ORDER BY g"
    return con.execute(sql.format(cheap)).fetchall(), con.execute(sql.format(costly)).fetchall()


@pytest.mark.parametrize("key", ["t", "v", "w"])
def test_a_pick_is_the_row_arg_min_picks_by_graph_then_value(con, key: str) -> None:
    cheap, costly = _both(con, f"{pick('x', f'k = {key!r}')}",
                          f"arg_min({{'o': o, 'd': d}}, (priority, o, d)) FILTER (WHERE k = '{key}') AS x")
    assert [(g, x and (x["o"], x["d"])) for g, x in cheap] == [(g, x and (x["o"], x["d"])) for g, x in costly]
    assert cheap[0][1] is None if key == "w" else cheap[0][1]["o"] == {"t": "c", "v": "a"}[key]


def test_the_best_value_is_arg_min_with_its_ties_broken_by_value(con) -> None:
    cheap, costly = _both(con, best("o", "priority", where="k = 't'"),
                          "arg_min(o, (priority, o)) FILTER (WHERE k = 't')")
    assert cheap == costly == [(1, "c"), (2, "only"), (3, None), (4, None)]


@pytest.mark.parametrize("where", [None, "k = 'v'", "k = 'nothing'"])
def test_joined_and_sorted_values_are_the_distinct_ordered_aggregates_nulls_and_empty_groups_too(con,
                                                                                                 where) -> None:
    only = f" FILTER (WHERE {where})" if where else ""
    cheap, costly = _both(con, joined("o", "', '", where), f"string_agg(DISTINCT o, ', ' ORDER BY o){only}")
    assert cheap == costly
    cheap, costly = _both(con, sorted_set("o", where), f"list(DISTINCT o ORDER BY o) FILTER (WHERE o IS NOT NULL"
                                                       f"{f' AND {where}' if where else ''})")
    assert cheap == costly


def test_the_shared_language_is_the_one_marker_every_part_has(con) -> None:
    costly = ("CASE WHEN count(DISTINCT d) FILTER (WHERE TRUE) = 1 AND starts_with(any_value(d) FILTER (WHERE TRUE), "
              "'@') THEN any_value(d) FILTER (WHERE TRUE) ELSE '' END")
    cheap, before = _both(con, same_language("TRUE"), costly)
    assert cheap == before and dict(cheap)[4] == "@en" and dict(cheap)[1] == ""
