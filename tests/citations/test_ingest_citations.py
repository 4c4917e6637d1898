"""``ingest_citations``: Semantic Scholar's citations into the ``citations`` graph, from the
emulator serving the ML citation graph."""

from __future__ import annotations

import io

import pyoxigraph as ox
import pytest

from ingest.citations import CitationRun, ingest_citations
from kg.citations import citations_of
from kg.errors import IngestError
from kg.graphs import CITATIONS
from kg.store.base import GraphStore
from kg.vocab import CITO, RDF, TKG
from tests.citations.ml_graph import ARXIV_CANDIDATE, arxiv_of

GDN = ox.NamedNode("https://arxiv.org/abs/2412.06464")
KDA = ox.NamedNode("https://arxiv.org/abs/2510.26692")


def dump(store: GraphStore) -> bytes:
    out = io.BytesIO()
    store.dump(out, fmt=ox.RdfFormat.N_QUADS)
    return b"\n".join(sorted(out.getvalue().splitlines()))


def in_citations(store: GraphStore, s: ox.NamedNode, p: ox.NamedNode, o: ox.Term) -> bool:
    return store.ask(f"ASK {{ GRAPH {CITATIONS} {{ {s} {p} {o} }} }}")


def node_of(store: GraphStore, technique: str) -> ox.NamedNode:
    rows = store.select("SELECT ?p WHERE { ?t skos:notation ?id ; tkg:primaryPaper ?p }",
                        {"id": ox.Literal(technique)})
    return rows.rows[0]["p"]  # type: ignore[return-value]


def test_citations_become_cito_with_intents_contexts_and_influence(built_store, source, emulator) -> None:
    report = ingest_citations(built_store, source)
    assert report.graph_written and "ARXIV:2412.06464" in report.added
    kda, gdn = node_of(built_store, "kda"), node_of(built_store, "gated-deltanet")
    for prop in (CITO.cites, CITO.usesMethodIn, CITO.obtainsBackgroundFrom, TKG.citesInfluentially):
        assert in_citations(built_store, kda, prop, gdn), prop
    assert not in_citations(built_store, kda, CITO.usesConclusionsFrom, gdn)
    (record,) = citations_of(built_store, [kda], cited=[gdn])
    assert record.influential and record.intents == {"methodology", "background"}
    assert [(c.text[:22], c.intents) for c in record.contexts] == [
        ("KDA refines the gating", ("methodology",)), ("Gated DeltaNet [12] co", ("background",))]
    citation = ox.NamedNode(record.node or "")
    assert in_citations(built_store, citation, RDF.type, CITO.Citation)
    assert in_citations(built_store, citation, CITO.hasCitationCharacterization, CITO.usesMethodIn)
    # A plain citation without contexts is a cito:cites and nothing more.
    muon, zero = node_of(built_store, "muon"), node_of(built_store, "zero")
    assert in_citations(built_store, muon, CITO.cites, zero)
    assert not citations_of(built_store, [muon], cited=[zero])[0].node
    # The run is a prov:Activity that generated the graph.
    assert built_store.ask(f"ASK {{ GRAPH <https://w3id.org/techkg/graph/provenance> {{ {CITATIONS} "
                           f"prov:wasGeneratedBy ?a . ?a rdfs:label \"kg ingest citations\" ; prov:used ?u }} }}")


def test_what_the_run_writes_conforms_to_the_shapes(built_store, source) -> None:
    from kg.validate import validate_store

    ingest_citations(built_store, source, CitationRun(recommendations=True))
    assert validate_store(built_store) == []


def test_new_papers_are_candidates_and_an_arxiv_one_merges_with_kg_ingest_arxiv(built_store, source, fast,
                                                                                  tmp_path) -> None:
    from ingest.arxiv import ArxivSource, ingest_arxiv
    from tests.ingest.replay import ReplayServer

    ingest_citations(built_store, source)
    candidate = ox.NamedNode(f"https://arxiv.org/abs/{ARXIV_CANDIDATE}")
    doi_candidate = ox.NamedNode("https://doi.org/10.5555/techkg.delta-study")
    for node in (candidate, doi_candidate):
        assert in_citations(built_store, node, TKG.candidate, ox.Literal("true", datatype=ox.NamedNode(
            "http://www.w3.org/2001/XMLSchema#boolean")))
    assert in_citations(built_store, doi_candidate, ox.NamedNode("http://purl.org/dc/terms/title"),
                        ox.Literal("Chunkwise gated delta rules for long-context retrieval"))
    with ReplayServer() as replay:
        client = fast("arxiv")
        ingest_arxiv(built_store, ArxivSource(client=client, api_url=replay.arxiv_url), ids=[ARXIV_CANDIDATE])
        client.close()
    rows = built_store.select("SELECT DISTINCT ?p WHERE { ?p tkg:arxivId ?id }", {"id": ox.Literal(ARXIV_CANDIDATE)})
    assert [r["p"] for r in rows] == [candidate]
    arxiv_graph = "<https://w3id.org/techkg/graph/arxiv>"
    assert built_store.ask(f"ASK {{ GRAPH {arxiv_graph} {{ {candidate} tkg:arxivVersion ?v }} }}")


def test_a_refresh_where_nothing_changed_costs_only_the_batch(built_store, source, emulator) -> None:
    ingest_citations(built_store, source)
    before = dump(built_store)
    emulator.requests.clear()
    report = ingest_citations(built_store, source)
    assert [(r.method, r.path) for r in emulator.requests] == [("POST", "/graph/v1/paper/batch")]
    assert not report.graph_written and report.counts()["unchanged"] == len(report.unchanged) > 20
    assert dump(built_store) == before


def test_only_the_lists_whose_count_changed_are_fetched_again(built_store, source, emulator) -> None:
    ingest_citations(built_store, source)
    ids = emulator.ids
    emulator.cite(ids["recommended"], ids["gated-deltanet"], contexts=[
        ("We port the Gated DeltaNet kernels to new hardware.", ["methodology"])])
    emulator.requests.clear()
    report = ingest_citations(built_store, source)
    lists = [r.path for r in emulator.requests if r.method == "GET"]
    assert lists == [f"/graph/v1/paper/{ids['gated-deltanet']}/citations"]
    assert report.updated == ["ARXIV:2412.06464"]
    new = ox.NamedNode("https://doi.org/10.5555/techkg.recommended")
    assert in_citations(built_store, new, CITO.usesMethodIn, GDN)
    # Citations fetched by earlier runs are kept.
    assert in_citations(built_store, KDA, CITO.cites, GDN)


def test_an_uncited_paper_drops_out_with_its_candidate(built_store, source, emulator) -> None:
    ingest_citations(built_store, source)
    survey = ox.NamedNode("https://doi.org/10.5555/techkg.survey")
    cocited = ox.NamedNode("https://doi.org/10.5555/techkg.cocited")
    assert in_citations(built_store, survey, TKG.candidate, ox.Literal("true", datatype=ox.NamedNode(
        "http://www.w3.org/2001/XMLSchema#boolean")))
    emulator.uncite(emulator.ids["survey"], emulator.ids["gated-deltanet"])
    ingest_citations(built_store, source)
    assert not in_citations(built_store, survey, CITO.cites, GDN)
    assert not built_store.ask(f"ASK {{ GRAPH {CITATIONS} {{ {survey} ?p ?o }} }}")
    assert built_store.ask(f"ASK {{ GRAPH {CITATIONS} {{ {cocited} ?p ?o }} }}")  # still cited by KDA


def test_every_id_form_the_api_takes_names_the_same_paper(fresh_store, source, emulator) -> None:
    pid = emulator.ids["gated-deltanet"]
    corpus = emulator.papers[pid].corpus_id
    forms = ["ARXIV:2412.06464", "arxiv:2412.06464v2", "2412.06464", "https://arxiv.org/abs/2412.06464",
             f"CorpusId:{corpus}", pid, f"url:https://www.semanticscholar.org/paper/{pid}"]
    report = ingest_citations(fresh_store, source, CitationRun(ids=forms, references=False))
    assert report.missing == [] and report.added == ["ARXIV:2412.06464"]
    sent = emulator.requests[0].body
    url = f"URL:https://www.semanticscholar.org/paper/{pid}"
    assert sent == f'{{"ids":["ARXIV:2412.06464","CorpusId:{corpus}","{pid}","{url}"]}}'.encode()
    assert [r.path.rsplit("/", 1)[-1] for r in emulator.requests[1:]] == ["citations"]
    assert in_citations(fresh_store, GDN, TKG.s2PaperId, ox.Literal(pid))


def test_unknown_ids_are_reported_missing_and_nothing_else_changes(built_store, source, emulator) -> None:
    before = dump(built_store)
    with pytest.raises(IngestError, match=r"knows none of the 2 papers asked for: ARXIV:2999.00001, DOI:10.5555/none"):
        ingest_citations(built_store, source, CitationRun(ids=["ARXIV:2999.00001", "DOI:10.5555/none"]))
    assert dump(built_store) == before
    report = ingest_citations(built_store, source, CitationRun(ids=["ARXIV:2999.00001", arxiv_of("grpo")]))
    assert report.missing == ["ARXIV:2999.00001"] and report.added == ["ARXIV:2402.03300"]


def test_the_lists_asked_for_and_the_limit_per_paper(fresh_store, source, emulator) -> None:
    report = ingest_citations(fresh_store, source, CitationRun(ids=[arxiv_of("gated-deltanet")], citations=False))
    assert {r.path.rsplit("/", 1)[-1] for r in emulator.requests if r.method == "GET"} == {"references"}
    assert not in_citations(fresh_store, KDA, CITO.cites, GDN) and in_citations(fresh_store, GDN, CITO.cites,
                                                                                ox.NamedNode("https://arxiv.org/abs/1605.08386"))
    assert report.added
    emulator.requests.clear()
    ingest_citations(fresh_store, source, CitationRun(ids=[arxiv_of("gated-deltanet")], max_per_paper=1))
    limits = {r.query["limit"][0] for r in emulator.requests if r.method == "GET"}
    assert limits == {"1"}
    cited_gdn = fresh_store.select(f"SELECT ?x WHERE {{ GRAPH {CITATIONS} {{ ?x cito:cites {GDN} }} }}")
    assert len(cited_gdn) == 1


def test_a_search_makes_candidates_of_what_it_finds(fresh_store, source, emulator) -> None:
    report = ingest_citations(fresh_store, source, CitationRun(query="gated delta", max_results=5))
    assert report.mode == "search"
    assert sorted(report.added) == sorted([emulator.ids["delta-study"], emulator.ids["gated-deltanet"]])
    study = ox.NamedNode("https://doi.org/10.5555/techkg.delta-study")
    for node in (study, GDN):
        assert fresh_store.ask(f"ASK {{ GRAPH {CITATIONS} {{ {node} tkg:candidate true ; dcterms:title ?t }} }}")
    # The bulk search, and no citation list unless asked for.
    assert {r.path for r in emulator.requests} == {"/graph/v1/paper/search/bulk"}
    assert not in_citations(fresh_store, study, CITO.usesMethodIn, GDN)
    emulator.requests.clear()
    ingest_citations(fresh_store, source, CitationRun(query="gated delta", max_results=5, lists=True))
    assert in_citations(fresh_store, study, CITO.usesMethodIn, GDN)
    assert {r.path.rsplit("/", 1)[-1] for r in emulator.requests} == {"bulk", "citations", "references"}


def test_recommendations_are_kept_for_the_techniques_papers(built_store, source, emulator) -> None:
    ingest_citations(built_store, source, CitationRun(recommendations=True))
    recommended = ox.NamedNode("https://doi.org/10.5555/techkg.recommended")
    assert in_citations(built_store, recommended, TKG.recommendedFor, GDN)
    assert in_citations(built_store, KDA, TKG.recommendedFor, GDN)
    asked = [r.path for r in emulator.requests if r.path.startswith("/recommendations/")]
    assert f"/recommendations/v1/papers/forpaper/{emulator.ids['gated-deltanet']}" in asked


@pytest.mark.parametrize("fault", ["malformed", "truncate", "status500", "status503", "rate_limit", "reset"])
def test_bad_answers_are_retried_then_fail_cleanly_with_nothing_written(built_store, source, emulator, fault,
                                                                          sleeps) -> None:
    ingest_citations(built_store, source, CitationRun(ids=[arxiv_of("kda")]))
    before = dump(built_store)
    emulator.cite(emulator.ids["survey"], emulator.ids["kda"])
    inject = {"malformed": lambda **kw: emulator.faults.malformed(**kw),
              "truncate": lambda **kw: emulator.faults.truncate(**kw),
              "status500": lambda **kw: emulator.faults.status(500, **kw),
              "status503": lambda **kw: emulator.faults.status(503, **kw),
              "rate_limit": lambda **kw: emulator.faults.rate_limit(**kw),
              "reset": lambda **kw: emulator.faults.reset(**kw)}[fault]
    inject(times=10, path="/citations$")
    with pytest.raises(IngestError) as caught:
        ingest_citations(built_store, source, CitationRun(ids=[arxiv_of("kda")]))
    assert "Nothing was written" in caught.value.hint or "nothing was written" in caught.value.message.lower() + \
        caught.value.hint.lower()
    assert len([r for r in emulator.requests if r.path.endswith("/citations")]) >= 1 + 3  # first run, then retried
    assert len(sleeps.waits) >= 2
    assert dump(built_store) == before
    # The same fault, fewer times than the retries: the run goes through.
    emulator.faults.clear()
    inject(times=2, path="/citations$")
    report = ingest_citations(built_store, source, CitationRun(ids=[arxiv_of("kda")]))
    assert report.updated == ["ARXIV:2510.26692"] and report.http["retries"] >= 2


def test_retry_after_is_honoured(built_store, source, emulator, sleeps) -> None:
    emulator.faults.rate_limit(times=1, retry_after=7, method="POST")
    ingest_citations(built_store, source, CitationRun(ids=[arxiv_of("kda")]))
    assert 7.0 in sleeps.waits


def test_offline_answers_from_the_cache_and_says_what_is_missing(built_store, source_for, emulator) -> None:
    online = source_for()
    ingest_citations(built_store, online, CitationRun(ids=[arxiv_of("kda")]))
    before = dump(built_store)
    emulator.requests.clear()
    offline = source_for(offline=True)
    report = ingest_citations(built_store, offline, CitationRun(ids=[arxiv_of("kda")], full=True))
    assert emulator.requests == [] and report.not_in_cache == [] and dump(built_store) == before
    from kg.errors import OfflineError

    with pytest.raises(OfflineError):
        ingest_citations(built_store, offline, CitationRun(ids=[arxiv_of("grpo")]))


def test_the_batch_holds_at_most_500_ids(fresh_store, source, emulator) -> None:
    ids = [f"DOI:10.5555/none.{i}" for i in range(1001)]
    with pytest.raises(IngestError, match="none of the 1001 papers"):
        ingest_citations(fresh_store, source, CitationRun(ids=ids))
    batches = [r for r in emulator.requests if r.path.endswith("/batch")]
    assert len(batches) == 3


def test_kg_ingest_arxiv_leaves_citation_candidates_alone_unless_named(built_store, source) -> None:
    from ingest.arxiv import tracked_ids

    before = tracked_ids(built_store)
    ingest_citations(built_store, source)
    assert ARXIV_CANDIDATE not in tracked_ids(built_store) and tracked_ids(built_store) == before


def test_a_large_first_run_goes_through_the_bulk_loader_with_the_same_result(built_store, fresh_store, source,
                                                                              monkeypatch) -> None:
    import ingest.citations as module
    from kg.build import build

    build(fresh_store, validate=False)
    ingest_citations(built_store, source)
    monkeypatch.setattr(module, "BULK_TRIPLES", 10)
    report = ingest_citations(fresh_store, source)
    assert report.graph_written and sorted(map(str, fresh_store.triples(CITATIONS))) == sorted(
        map(str, built_store.triples(CITATIONS)))
    assert fresh_store.ask(f"ASK {{ GRAPH <https://w3id.org/techkg/graph/provenance> {{ {CITATIONS} "
                           f"prov:wasGeneratedBy ?a . ?a rdfs:label \"kg ingest citations\" }} }}")


def test_citations_without_an_id_are_counted_as_skipped_and_the_summary_counts_what_was_written(
        fresh_store, source, emulator) -> None:
    lost = emulator.add_paper("A talk that Semantic Scholar could not match", resolved=False)
    emulator.cite(emulator.ids["kda"], lost, contexts=[("As shown in the talk [9].", ["background"])])
    report = ingest_citations(fresh_store, source, CitationRun(ids=[arxiv_of("kda")], citations=False))
    written = len(citations_of(fresh_store))
    summary = next(n for n in report.notes if "citations written" in n)
    assert summary.startswith(f"{written} citations written from 1 lists")
    skipped = next(n for n in report.notes if "skipped" in n)
    assert skipped.startswith("1 citations skipped: Semantic Scholar gives the other paper no id")
    assert "“A talk that Semantic Scholar could not match”" in skipped


def test_recommendations_for_the_reader_are_like_what_was_read_and_unlike_what_was_rejected(
        built_store, source, emulator) -> None:
    from kg.decisions import READER
    from kg.reading import set_status
    from kg.rejections import reject

    set_status(built_store, GDN, "read")
    reject(built_store, ["https://doi.org/10.5555/techkg.cocited"])
    ingest_citations(built_store, source, CitationRun(recommendations=True))
    (post,) = [r for r in emulator.requests if r.method == "POST" and r.path == "/recommendations/v1/papers"]
    import json

    body = json.loads(post.body)
    assert emulator.ids["gated-deltanet"] in body["positivePaperIds"]
    assert body["negativePaperIds"] == ["DOI:10.5555/techkg.cocited"]  # not looked up yet: by its DOI
    recommended = {r["p"] for r in built_store.select(
        f"SELECT ?p WHERE {{ GRAPH {CITATIONS} {{ ?p tkg:recommendedFor {READER} }} }}").records()}
    assert "https://doi.org/10.5555/techkg.recommended" in recommended
    assert "https://doi.org/10.5555/techkg.cocited" not in recommended and GDN.value not in recommended
