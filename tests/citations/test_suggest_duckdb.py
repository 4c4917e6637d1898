"""``kg suggest`` answered from the DuckDB analytics tables when they are fresh: the very
answer SPARQL gives (suggestions, scores, evidence, order), on the emulator's citation
graph with a reader who follows a technique, has read papers, and has accepted and
rejected suggestions."""

from __future__ import annotations

import json
import os

import pyoxigraph as ox
import pytest

from ingest.citations import CitationRun, ingest_citations
from kg.analytics import build, database_path
from kg.analytics.suggest import DuckDBReadingFacts, lineage_facts, open_tables
from kg.decisions import accept, reject
from kg.iris import technique_iri
from kg.reading import set_status
from kg.readnext import reading_suggestions
from kg.suggestions import lineage_report

GDN_PAPER = ox.NamedNode("https://arxiv.org/abs/2412.06464")
STUDY = ox.NamedNode("https://doi.org/10.5555/techkg.delta-study")
TECHNIQUES = [None, ox.NamedNode(technique_iri("grpo").value), ox.NamedNode(technique_iri("gated-deltanet").value)]


def _pair(report, child: str, parent: str):
    return next(s for s in report.suggestions if (s.child.id, s.parent.id) == (child, parent))


@pytest.fixture
def analysed(built_store, source, emulator):
    """The citations ingested, the reader's state set, and the analytics tables built."""
    store = built_store
    # one more planted edge, so that one stays pending beside the accepted and the rejected one
    emulator.cite(emulator.ids["kda"], emulator.ids["gqa"], influential=True,
                  contexts=[("Following GQA, we share keys and values across heads.", ["methodology"])])
    ingest_citations(store, source, CitationRun(recommendations=True))
    set_status(store, GDN_PAPER, "reading")
    set_status(store, STUDY, "read")
    report = lineage_report(store)
    reject(store, _pair(report, "latentmoe", "aux-loss-free-balancing"))
    accept(store, _pair(report, "diffusionnft", "grpo"), relation="portsTo")
    build(store, database_path(store.location))
    return store


def _tables(store):
    con, note = open_tables(store)
    assert con is not None, note
    assert "DuckDB analytics tables (fresh)" in note
    return con


def test_the_tables_give_the_facts_sparql_gives(analysed) -> None:
    from kg.suggestions import lineage_facts as sparql_facts

    con = _tables(analysed)
    try:
        duck = lineage_facts(con)
    finally:
        con.close()
    sparql = sparql_facts(analysed)
    assert duck.techniques == sparql.techniques and len(sparql.techniques) > 20
    assert duck.citations == sparql.citations and any(r.contexts for r in sparql.citations)
    assert sorted(duck.edges) == sorted(sparql.edges) and any(e.basis == "accepted" for e in sparql.edges)


@pytest.mark.parametrize("technique", TECHNIQUES, ids=["all", "grpo", "gated-deltanet"])
def test_lineage_from_the_tables_is_the_sparql_answer(analysed, technique) -> None:
    sparql = lineage_report(analysed, technique)
    con = _tables(analysed)
    try:
        duck = lineage_report(analysed, technique, facts=lineage_facts(con))
    finally:
        con.close()
    assert [s.as_dict() for s in duck.all()] == [s.as_dict() for s in sparql.all()]
    assert duck.citations_read == sparql.citations_read
    if technique is None:
        assert ("kda", "gqa") in {(s.child.id, s.parent.id) for s in duck.suggestions}
        assert {s.status for s in sparql.existing} == {"confirmed", "background", "lacking"}
        # the rejected edge is never suggested, the accepted one is an existing edge, on both paths
        assert ("latentmoe", "aux-loss-free-balancing") in {(s.child.id, s.parent.id) for s in duck.rejected}
        assert ("latentmoe", "aux-loss-free-balancing") not in {(s.child.id, s.parent.id) for s in duck.suggestions}
        assert any(s.basis == "accepted" and s.child.id == "diffusionnft" for s in duck.existing)


@pytest.mark.parametrize("technique", [None, TECHNIQUES[2]], ids=["followed-and-read", "gated-deltanet"])
@pytest.mark.parametrize("limit", [3, 50])
def test_reading_from_the_tables_is_the_sparql_answer(analysed, technique, limit) -> None:
    sparql = reading_suggestions(analysed, technique=technique, limit=limit)
    con = _tables(analysed)
    try:
        duck = reading_suggestions(analysed, technique=technique, limit=limit, facts=DuckDBReadingFacts(con))
    finally:
        con.close()
    assert sparql and [s.as_dict() for s in duck] == [s.as_dict() for s in sparql]
    assert {e["kind"] for s in sparql for e in s.evidence} >= {"co-cited", "recommended"} or limit == 3


def test_the_commands_say_which_source_answered(kg_cli, emulator, built_store_path) -> None:
    store = built_store_path
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", "--recommendations", store=store,
           check=True)
    sparql = kg_cli("suggest", "lineage", "-f", "json", store=store, check=True)
    assert "answered by SPARQL" in sparql.stderr and "kg analytics build" in sparql.stderr
    kg_cli("analytics", "build", store=store, check=True)
    duck = kg_cli("suggest", "lineage", "-f", "json", store=store, check=True)
    assert "answered from the DuckDB analytics tables (fresh)" in duck.stderr
    assert json.loads(duck.stdout) == json.loads(sparql.stdout)
    pick = json.loads(duck.stdout)["suggestions"][0]
    # A decision keeps fresh tables fresh (kg suggest reject updates them): still DuckDB, the SPARQL answer.
    kg_cli("suggest", "reject", pick["id"], store=store, check=True)
    again = kg_cli("suggest", "lineage", "-f", "json", store=store, check=True)
    elsewhere = {"KG_ANALYTICS_DB": str(store.parent / "elsewhere.duckdb")}
    sparql = kg_cli("suggest", "lineage", "-f", "json", store=store, env=elsewhere, check=True)
    assert "DuckDB" in again.stderr and json.loads(again.stdout) == json.loads(sparql.stdout)
    assert pick["id"] not in {s["id"] for s in json.loads(again.stdout)["suggestions"]}
    assert pick["id"] in {s["id"] for s in json.loads(again.stdout)["rejected"]}
    duck_reading = kg_cli("suggest", "reading", "-t", "GDN", "-f", "json", store=store, check=True)
    sparql_reading = kg_cli("suggest", "reading", "-t", "GDN", "-f", "json", store=store, env=elsewhere, check=True)
    assert "DuckDB" in duck_reading.stderr and "answered by SPARQL" in sparql_reading.stderr
    assert json.loads(duck_reading.stdout) == json.loads(sparql_reading.stdout)
    assert json.loads(duck_reading.stdout)["suggestions"]


def test_the_latest_reads_are_the_same_from_the_tables(tmp_path, monkeypatch) -> None:
    """The tables pick the newest reads by DuckDB's reading of the times, with room to
    spare, and kg.readnext sorts them by its own: the same seeds as SPARQL's, across time
    zones, times without a zone, ties and times neither can read."""
    import kg.readnext
    from tests.citations.reads import STAMPS, store_with_reads

    stamps = [*STAMPS, "last Tuesday", "2025-03-01"]
    store = store_with_reads(tmp_path / "store", stamps)
    build(store, database_path(store.location))
    try:
        for keep in (1, 3, 5, 9, 20):
            monkeypatch.setattr(kg.readnext, "READ_SEEDS", keep)
            con = _tables(store)
            try:
                duck = kg.readnext.seeds(store, facts=DuckDBReadingFacts(con))
            finally:
                con.close()
            assert duck == kg.readnext.seeds(store) and len(duck) == min(keep, len(stamps))
    finally:
        store.close()


def test_suggest_lineage_reads_while_another_process_writes(kg_cli, built_store_path) -> None:
    """kg suggest lineage and kg suggest reading only read: they answer at once while a
    writer (kg ingest citations, say) holds the store, instead of waiting for it."""
    from kg.store.embedded import OxigraphStore

    kg_cli("stats", store=built_store_path, check=True)  # the store's first published view
    writer = OxigraphStore(built_store_path)
    try:
        for args in (["suggest", "lineage", "-f", "json"], ["suggest", "reading", "-f", "json"]):
            done = kg_cli("--wait", "0", *args, store=built_store_path)
            assert done.returncode == 0, done.stderr
            assert "answered by SPARQL" in done.stderr
    finally:
        writer.close()


def test_the_memo_answers_without_the_store_until_anything_is_written(kg_cli, emulator, built_store_path,
                                                                     tmp_path) -> None:
    """With fresh tables kg suggest keeps a memo and answers the next time without opening
    the store; any write (a reading status, an accept, a reject, an import, a build) makes
    it open the store again, and the answer is always the SPARQL one."""
    from kg.analytics.suggest import from_memo, memo_path

    store = built_store_path
    spec = str(store)
    elsewhere = {"KG_ANALYTICS_DB": str(tmp_path / "elsewhere.duckdb")}
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", "--recommendations", store=store,
           check=True)
    kg_cli("analytics", "build", store=store, check=True)

    def answers(*args: str) -> dict:
        duck = kg_cli("suggest", *args, "-f", "json", store=store, check=True)
        sparql = kg_cli("suggest", *args, "-f", "json", store=store, env=elsewhere, check=True)
        assert "DuckDB analytics tables (fresh)" in duck.stderr and "answered by SPARQL" in sparql.stderr
        assert json.loads(duck.stdout) == json.loads(sparql.stdout)
        return json.loads(duck.stdout)

    def held(technique: str | None = None) -> bool:
        found = from_memo(spec, technique)
        if found is not None:
            assert found.store is None and found.con is not None
            found.close()
        return found is not None

    assert held() and not held("GDN")  # kg analytics build leaves the memo
    memo_path(database_path(spec)).unlink()
    first = answers("lineage")  # from the store: writes the memo again
    assert memo_path(database_path(spec)).exists() and held() and not held("GDN")
    answers("reading", "-t", "GDN")
    assert held("GDN") and answers("lineage") == first  # from the memo

    def written(*args: str) -> None:
        kg_cli(*args, store=store, check=True)
        assert not held()
        kg_cli("analytics", "build", store=store, check=True)
        assert held()
        answers("lineage")
        answers("reading")
        assert held()

    written("reading", "set", "2412.06464", "read")
    pick = answers("lineage")["suggestions"]
    # A decision updates fresh tables itself (an incremental build) and the memo with them.
    kg_cli("suggest", "reject", pick[0]["id"], store=store, check=True)
    assert held() and pick[0]["id"] in {s["id"] for s in answers("lineage")["rejected"]}
    kg_cli("suggest", "accept", pick[1]["id"], store=store, check=True)
    assert held() and pick[1]["id"] in {s["id"] for s in answers("lineage")["existing"]}
    extra = tmp_path / "extra.ttl"
    extra.write_text("<https://example.org/p> <http://purl.org/dc/terms/title> \"A paper\" .\n", encoding="utf-8")
    written("import", "rdf", str(extra), "--graph", "extra")
    path = database_path(spec)  # the same view, the file changed
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))
    assert not held()
