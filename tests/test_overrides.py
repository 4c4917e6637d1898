"""The one rule for the reader's facts on a catalog technique: where one value is expected,
theirs replaces the catalog's, in every named query that reads such a value, in the views,
and in the analytics tables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kg.owntech import Change, add_technique, edit_technique
from kg.owntech.overrides import prefer_mine

QUERIES = Path(__file__).resolve().parent.parent / "queries"
#: The single-valued facts of a technique as the named queries write them (a technique's
#: primary paper and repository are lists where papers or repositories are listed).
SINGLE = ("dcterms:date", "tkg:dateNote", "skos:definition", "tkg:headlineResult", "tkg:headlineConditional",
          "tkg:headlineConditions", "tkg:suitedFor", "tkg:availability", "tkg:coreMechanism", "tkg:limitations")


@pytest.mark.parametrize("path", sorted(QUERIES.glob("*.rq")), ids=lambda p: p.stem)
def test_every_named_query_reading_a_single_valued_technique_fact_prefers_the_readers(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    singles = "|".join(map(re.escape, SINGLE))
    for subject, predicate, value in re.findall(r"(\?\w+) (" + singles + r") (\?\w+)", text):
        if subject in ("?category", "?c") or value.startswith("?my_"):  # a category's; the reader's own
            continue
        if value.startswith("?any_"):  # read by mine_first: the reader's value comes first
            var = value.removeprefix("?any_")
            assert f"BIND(COALESCE(?mine_{var}, ?any_{var}) AS ?{var})" in text, (path.name, value)
            assert f"OPTIONAL {{ {subject} {predicate} {value} }}" in text, (path.name, value)
            assert (f"{{ ?rv tkg:property {predicate} ; rdf:value ?my_{var} }}" in text  # a branch of a UNION
                    or f"BIND(IF(?property = {predicate}, ?value, ?unbound) AS ?my_{var})" in text), (path.name, value)
            continue
        assert prefer_mine(subject, predicate, value) in text, (path.name, subject, predicate, value)
    for value in ("?v", "?value"):
        if f"?technique ?property {value} " in text or f"?technique ?property {value}\n" in text:
            assert prefer_mine("?technique", "?property", value) in text, path.name


def test_the_analytics_tables_take_the_readers_value_and_mark_their_techniques(built_store, tmp_path) -> None:
    from kg.analytics.materialize import build, connect

    edit_technique(built_store, "KDA", Change(date="2025-11", values={"limitations": "My words."}))
    add_technique(built_store, Change(name="GPipe", new_category="Pipeline parallelism", paper="1811.06965",
                                      date="2018"))
    path = tmp_path / "a.duckdb"
    build(built_store, path)
    con = connect(path, read_only=True)
    try:
        rows = dict(con.execute("SELECT technique_id, date FROM techniques WHERE technique_id IN ('kda', 'gpipe')")
                    .fetchall())
        mine = dict(con.execute("SELECT technique_id, mine FROM techniques WHERE technique_id IN ('kda', 'gpipe')")
                    .fetchall())
        limits = con.execute("""SELECT value FROM technique_dimensions WHERE technique_id = 'kda'
                                AND dimension = 'limitations'""").fetchall()
    finally:
        con.close()
    assert rows == {"kda": "2025-11", "gpipe": "2018"}
    assert mine == {"kda": False, "gpipe": True}
    assert limits == [("My words.",)]
