"""A paper has one reading status on every surface: the reader's own (the reading graph)
where they set one, over a status an import states; from the tables and by SPARQL alike."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import kg.answer
import queries
from kg.analytics.lookups import reading_counts as counts_from_tables
from kg.analytics.twins import TWINS
from kg.counts import reading_counts
from kg.graphs import READING, graph_iri
from kg.resolve import Resolver
from tests.analytics.conftest import OVERRIDDEN


def _overridden(store: Any) -> str:
    """The corpus paper the fixture's reader marked read over the corpus's to-read."""
    rows = store.select(f"""SELECT ?p WHERE {{
        GRAPH {graph_iri("bench")} {{ ?p tkg:readingStatus <https://w3id.org/techkg/id/status/to-read> }}
        GRAPH {READING} {{ ?p tkg:readingStatus <https://w3id.org/techkg/id/status/read> }} }}""").rows
    assert len(rows) == 1
    return rows[0]["p"].value


def _records(store: Any, name: str, params: dict[str, str], *, analytics: bool) -> list[dict[str, Any]]:
    found = kg.answer.answer(store, queries.get(name), params, Resolver(store), analytics=analytics)
    assert found.source == ("duckdb" if analytics and name in TWINS else "sparql")
    variables = found.page.variables
    return [{v: (None if t is None else t.value) for v, t in zip(variables, row, strict=True)} for row in found.page]


@pytest.mark.parametrize("analytics", [True, False], ids=["tables", "sparql"])
def test_the_readers_status_is_the_papers_only_status_in_every_named_query(analysed_store: Any,
                                                                             analytics: bool) -> None:
    paper = _overridden(analysed_store)

    def rows(name: str, **params: str) -> list[dict[str, Any]]:
        return [r for r in _records(analysed_store, name, params, analytics=analytics)
                if r.get("paper") == paper]

    listed = rows("reading-list")
    assert [(r["status"].rsplit("/", 1)[-1], r["changed"][:10]) for r in listed] == [
        ("read", OVERRIDDEN.date().isoformat())]
    assert rows("reading-list", status="to-read") == []
    assert rows("reading-queue") == []  # read: off the queue
    assert [r["status"] for r in rows("bibliography")] == ["read"]
    assert {r["status"] for r in rows("lineage-papers")} == {"read"}
    assert {r["status"].rsplit("/", 1)[-1] for r in rows("lineage-paper-links")} == {"read"}
    assert {r["status"] for r in rows("technique-papers", technique=_technique(analysed_store, paper))} == {"read"}
    read = rows("read-without-note")
    assert [r["readAt"][:10] for r in read] == [OVERRIDDEN.date().isoformat()]


def _technique(store: Any, paper: str) -> str:
    from pyoxigraph import NamedNode

    return store.select("SELECT ?t WHERE { ?p tkg:usesTechnique|tkg:introducesTechnique ?t } ORDER BY ?t LIMIT 1",
                        {"p": NamedNode(paper)}).rows[0]["t"].value


def test_reading_progress_by_sparql_counts_each_paper_once(analysed_store: Any) -> None:
    listed = {r["label"].value: int(r["n"].value) for r in analysed_store.select(
        """SELECT ?label (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p tkg:readingCategory ?c ; tkg:readingStatus ?s .
             ?c skos:prefLabel ?label } GROUP BY ?label""").rows}
    rows = _records(analysed_store, "reading-progress", {}, analytics=False)
    assert {r["category"]: int(r["papers"]) for r in rows} == listed
    for row in rows:
        parts = sum(int(row[k]) for k in ("read", "reading", "toRead", "skipped", "other"))
        assert parts == int(row["papers"]), row


def test_the_reading_counts_add_up_to_the_papers_on_both_paths(analysed_store: Any) -> None:
    by_sparql = reading_counts(analysed_store)
    from_tables = counts_from_tables(analysed_store)
    assert from_tables is not None
    assert sum(by_sparql.statuses.values()) == by_sparql.papers
    assert (by_sparql.papers, by_sparql.statuses, by_sparql.with_note, by_sparql.uncategorised) == (
        from_tables.papers, from_tables.statuses, from_tables.with_note, from_tables.uncategorised)


QUERIES = Path(__file__).resolve().parents[2] / "queries"
#: Where a named query reads a status or a time only to know that a paper has one (it is on
#: the reading list), or a time as an event of its own, which the rule leaves as it is.
MEMBERSHIP = {("bibliography", "?s"), ("reading-suggestions", "?listed"), ("reading-suggestions", "?any"),
              ("reading-suggestions", "?status"), ("new-since", "?at")}


@pytest.mark.parametrize("path", sorted(QUERIES.glob("*.rq")), ids=lambda p: p.stem)
def test_every_named_query_reading_a_status_or_its_time_takes_the_readers_own(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = re.findall(r"(\?\w+) (?:[^.{}]*; )?tkg:(readingStatus|statusChangedAt) (\?\w+|<[^>]+>)", text)
    for subject, key, value in found:
        if value.startswith("?own") or (path.stem, value) in MEMBERSHIP:
            continue
        mine = "ownStatus" if key == "readingStatus" else "ownAt"
        reading = f"GRAPH <{READING.value}> {{ {subject} tkg:{key} ?{mine} }}"
        inside = rf"FILTER NOT EXISTS \{{ {re.escape(reading)}\s+FILTER\(\?{mine} != {re.escape(value)}\) \}}"
        if re.search(inside, text):  # in an OPTIONAL block: asked for each of its rows
            continue
        if value.startswith("?"):  # a required pattern: the values the reader's replace taken away
            assert re.search(rf"MINUS \{{ {re.escape(reading)}\s+"
                             rf"\{subject} tkg:{key} \{value} FILTER\(\{value} != \?{mine}\) \}}", text), (
                path.stem, value)
        else:
            assert re.search(rf"MINUS \{{ {re.escape(reading)}\s+FILTER\(\?{mine} != {re.escape(value)}\) \}}",
                             text), (path.stem, value)
