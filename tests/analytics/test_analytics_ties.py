"""The build's picks are the same whatever order the facts were staged in, and the staged
facts are kept in key order (each table's and answer's scan reads only its keys' rows)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.analytics import connect
from kg.analytics.materialize import _fresh
from kg.analytics.tables import table
from kg.analytics.twins import TWINS

PERSON = "https://example.org/person/1"
PAPER = "https://example.org/paper/1"
TECHNIQUE = "https://example.org/technique/1"
TEAM = "https://example.org/org/team"


def _staged(path: Path, facts: list[tuple[Any, ...]]) -> Any:
    """A fresh analytics file whose one graph holds ``facts`` (s, k, o, d), staged in
    that order, read by one thread (so that nothing but the SQL decides a pick)."""
    con = _fresh(path)
    con.execute("SET threads = 1")
    con.execute("INSERT INTO staging.graphs (id, graph, name, priority, facts) VALUES (1, 'urn:g', 'g', 7, 0)")
    con.executemany("INSERT INTO staging.facts VALUES (1, ?, ?, ?, NULL, ?)", facts)
    return con


@pytest.fixture(params=["least first", "least last"])
def order(request: pytest.FixtureRequest) -> Iterator[bool]:
    yield request.param == "least last"


def test_two_values_in_one_graph_give_the_least_however_they_were_staged(tmp_path: Path, order: bool) -> None:
    names = [(PERSON, "foaf:name", "Ann", ""), (PERSON, "foaf:name", "Zed", "")]
    parents = [(TEAM, "schema:parentOrganization", "https://example.org/org/a", None),
               (TEAM, "schema:parentOrganization", "https://example.org/org/z", None)]
    if order:
        names.reverse()
        parents.reverse()
    con = _staged(tmp_path / "a.duckdb", [(PERSON, "a:foaf:Person", None, None), *names,
                                          (TEAM, "a:foaf:Group", None, None), *parents])
    con.execute(f"CREATE TABLE main.authors AS {table('authors').sql}")
    con.execute(f"CREATE TABLE main.organisations AS {table('organisations').sql}")
    assert con.execute("SELECT person, name FROM authors").fetchall() == [(PERSON, "Ann")]
    assert con.execute("SELECT parent, canonical FROM organisations WHERE organisation = ?", [TEAM]).fetchall() == [
        ("https://example.org/org/a", "https://example.org/org/a")]


def test_an_answer_picks_the_least_of_one_graphs_values_however_they_were_staged(
    tmp_path: Path, order: bool
) -> None:
    titles = [(PAPER, "dcterms:title", "A title", "@en"), (PAPER, "dcterms:title", "Z title", "")]
    if order:
        titles.reverse()
    con = _staged(tmp_path / "a.duckdb", [(TECHNIQUE, "tkg:primaryPaper", PAPER, None), *titles])
    found = con.execute(f"SELECT title, title__d FROM ({TWINS['lineage-papers'].sql})",
                        {"technique": None, "paper": None, "page": None}).fetchall()
    assert found == [("A title", "@en")]


def test_a_full_build_keeps_the_staged_facts_in_key_order(analysed_db: Path) -> None:
    con = connect(analysed_db, read_only=True)
    try:
        out_of_order = con.execute(
            "SELECT count(*) FROM (SELECT k, lag(k) OVER (ORDER BY rowid) AS before FROM staging.facts) "
            "WHERE k < before").fetchall()
        keys = con.execute("SELECT count(DISTINCT k) FROM staging.facts").fetchall()
    finally:
        con.close()
    assert keys[0][0] > 10
    assert out_of_order == [(0,)]
