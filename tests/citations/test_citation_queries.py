"""The citation named queries, the DuckDB citations table and kg analytics papers --influential."""

from __future__ import annotations

import json

import pytest

import kg.answer
from ingest.citations import ingest_citations
from kg.resolve import Resolver
from kg.results import Solutions


@pytest.fixture
def cited(built_store, source):
    ingest_citations(built_store, source)
    return built_store


def records(store, name: str, **params: str) -> list[dict]:
    result = kg.answer.run(store, name, params, Resolver(store))
    assert isinstance(result, Solutions)
    return result.records()


def test_citations_of_a_paper_both_ways(cited) -> None:
    rows = records(cited, "citations-of", paper="2412.06464")
    by = {(r["direction"], r["title"][:12]): r for r in rows}
    kda = by[("cited-by", "Kimi Linear:")]
    assert kda["influential"] is True and set(kda["intents"].split(",")) == {"methodology", "background"}
    assert kda["contexts"] == 2 and kda["year"] == "2025"
    assert by[("cites", "Theano: A Py")]["contexts"] == 0


def test_cited_by_technique_filters_by_intent(cited) -> None:
    method = {r["title"][:10] for r in records(cited, "cited-by-technique", technique="GDN")}
    assert method == {"Kimi Linea", "Chunkwise "}
    anything = {r["title"][:10] for r in records(cited, "cited-by-technique", technique="GDN", intent="any")}
    assert anything == method | {"A survey o"}
    background = records(cited, "cited-by-technique", technique="GDN", intent="background")
    assert {r["title"][:10] for r in background} == {"A survey o", "Kimi Linea"}


def test_lineage_evidence_for_existing_edges(cited) -> None:
    rows = records(cited, "lineage-evidence", technique="KDA")
    assert [(r["childName"], r["relation"], r["parentName"]) for r in rows] == [
        ("Kimi Delta Attention", "refines", "Gated DeltaNet")]
    assert rows[0]["influential"] is True and "refines the gating" in rows[0]["context"]
    everything = {(r["childName"], r["parentName"]) for r in records(cited, "lineage-evidence")}
    assert ("Multi-Query Attention", "Full Attention / Transformer") not in everything  # MQA's paper cites nothing
    assert ("Grouped-Query Attention", "Multi-Query Attention") in everything


def test_reading_suggestions_query_agrees_with_the_command(cited) -> None:
    from pyoxigraph import NamedNode

    from kg.iris import technique_iri
    from kg.readnext import reading_suggestions

    rows = records(cited, "reading-suggestions", technique="GDN")
    command = reading_suggestions(cited, technique=NamedNode(technique_iri("gated-deltanet").value))
    # The query's score is the strongest direct piece of evidence, on the command's scale.
    direct = {s.paper: round(max((e["weight"] for e in s.evidence if e["kind"] not in ("co-cited", "coupled")),
                                 default=0), 2) for s in command}
    assert {r["paper"]: round(float(r["score"]), 2) for r in rows} == {p: w for p, w in direct.items() if w}
    assert all(0 < float(r["score"]) <= 1 for r in rows)


def test_the_duckdb_citations_table_and_the_influential_papers(cited, kg_cli, tmp_path) -> None:
    from kg.analytics import build, connect

    path = tmp_path / "a.duckdb"
    build(cited, path)
    con = connect(path, read_only=True)
    try:
        total, methodology, influential, with_contexts = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE methodology), count(*) FILTER (WHERE influential), "
            "count(*) FILTER (WHERE contexts > 0) FROM citations").fetchone()
        gdn = con.execute("SELECT citation_count, influential_citation_count FROM citation_counts "
                          "WHERE paper = 'https://arxiv.org/abs/2412.06464'").fetchone()
    finally:
        con.close()
    sparql = cited.select("""SELECT (COUNT(*) AS ?n) WHERE { GRAPH <https://w3id.org/techkg/graph/citations> {
                               ?a cito:cites ?b } }""").records()[0]["n"]
    method = cited.select("""SELECT (COUNT(*) AS ?n) WHERE { ?a cito:usesMethodIn ?b }""").records()[0]["n"]
    assert (total, methodology) == (sparql, method) and influential == 4 and with_contexts == total - 2
    assert gdn == (3, 2)


def test_kg_analytics_papers_influential(kg_cli, emulator, built_store_path) -> None:
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=built_store_path, check=True)
    out = kg_cli("analytics", "papers", "--influential", "--json", store=built_store_path, check=True).stdout
    report = json.loads(out)
    top = report["most_influential"][0]
    assert top["paper"].startswith("Gated Delta Networks") and top["influential"] == 2
    intents = {r["intent"]: r["citations"] for r in report["intents"]}
    assert intents["influential"] == 4 and intents["all"] >= intents["methodology"] > 0
