"""arXiv ingest against the replay server: the real ``arxiv`` package and TechKG's
client, recorded Atom feeds, triples asserted in the store."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from ingest.arxiv import ArxivSource, ingest_arxiv, tracked_ids
from ingest.http import stats_for
from kg.errors import IngestError, OfflineError
from kg.graphs import ARXIV, CATALOG
from kg.vocab import BIBO, DCTERMS, ID, RDF, TKG, XSD, text
from tests.ingest.replay import ReplayServer

PAPER = ox.NamedNode("https://arxiv.org/abs/1605.08386")


def values(store, subject: ox.NamedNode, prop: ox.NamedNode) -> list[str]:  # noqa: ANN001
    return sorted(t.object.value for t in store.triples(ARXIV) if t.subject == subject and t.predicate == prop)


def test_ids_are_looked_up_in_one_batch_and_the_metadata_lands(fresh_store, arxiv_source, replay) -> None:
    report = ingest_arxiv(fresh_store, arxiv_source, ids=["2104.12255v1", "1605.08386", "2202.12139", "hep-ph/0301050"])
    assert sorted(report.added) == ["1605.08386", "2104.12255", "2202.12139", "hep-ph/0301050"]
    queries = replay.requests("/api/query")
    assert len(queries) == 1 and queries[0].query["id_list"] == ["2104.12255v1,1605.08386,2202.12139,hep-ph/0301050"]
    assert values(fresh_store, PAPER, DCTERMS.title) == ["Heat-bath random walks with Markov bases"]
    assert values(fresh_store, PAPER, TKG.arxivPrimaryCategory) == ["math.CO"]
    assert values(fresh_store, PAPER, TKG.arxivCategory) == ["math.CO", "math.ST"]
    assert values(fresh_store, PAPER, TKG.arxivComment) == ["20 pages, 3 figures"]
    assert values(fresh_store, PAPER, TKG.arxivVersion) == ["1"]
    assert values(fresh_store, PAPER, TKG.pdf) == ["https://arxiv.org/pdf/1605.08386v1"]
    assert values(fresh_store, PAPER, DCTERMS.issued) == ["2016-05-26T17:59:46Z"]
    assert values(fresh_store, PAPER, DCTERMS.abstract)[0].startswith("Graphs on lattice points are studied")
    doi_paper = ox.NamedNode("https://arxiv.org/abs/2202.12139")
    assert values(fresh_store, doi_paper, BIBO.doi) == ["10.1109/ICSTW55395.2022.00035"]
    assert values(fresh_store, doi_paper, TKG.journalRef)[0].startswith("Artificial Intelligence in Software Testing @")


def test_authors_keep_their_order_in_an_rdf_seq(fresh_store, arxiv_source) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386"])
    rows = fresh_store.select(
        """SELECT ?i ?name WHERE { ?p bibo:authorList ?seq . ?seq a rdf:Seq ; ?member ?person .
             ?person foaf:name ?name . FILTER(STRSTARTS(STR(?member), STR(rdf:_)))
             BIND(xsd:integer(STRAFTER(STR(?member), "#_")) AS ?i) } ORDER BY ?i""",
        {"p": PAPER},
    ).records()
    assert [(r["i"], r["name"]) for r in rows] == [(1, "Caprice Stanley"), (2, "Tobias Windisch")]
    creators = values(fresh_store, PAPER, DCTERMS.creator)
    assert creators == sorted([ID["person/caprice-stanley"].value, ID["person/tobias-windisch"].value])
    assert values(fresh_store, PAPER, TKG.firstAuthor) == [ID["person/caprice-stanley"].value]


def test_an_author_of_several_papers_is_one_person(fresh_store, arxiv_source) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["2202.06271", "2501.07954", "2101.09077"])
    rows = fresh_store.select("""SELECT DISTINCT ?person WHERE { ?paper dcterms:creator ?person .
                                   ?person foaf:name "Gordon Fraser" }""")
    assert len(rows) == 1
    papers = fresh_store.select("SELECT ?paper WHERE { ?paper dcterms:creator ?person }",
                                {"person": rows.rows[0]["person"]})
    assert len(papers) == 3


def test_old_style_and_versioned_ids_never_make_a_second_node(fresh_store, arxiv_source) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["cs/0503050v1", "2104.12255v1"])
    ingest_arxiv(fresh_store, arxiv_source, ids=["cs/0503050", "2104.12255"])
    subjects = {t.subject.value for t in fresh_store.triples(ARXIV) if t.predicate == TKG.arxivId}
    assert subjects == {"https://arxiv.org/abs/cs/0503050", "https://arxiv.org/abs/2104.12255"}
    assert values(fresh_store, ox.NamedNode("https://arxiv.org/abs/cs/0503050"), TKG.arxivId) == ["cs/0503050"]
    assert values(fresh_store, ox.NamedNode("https://arxiv.org/abs/cs/0503050"), TKG.arxivVersion) == ["1"]


def test_a_paper_the_graph_knows_under_another_iri_keeps_its_node(fresh_store, arxiv_source) -> None:
    known = ox.NamedNode("https://doi.org/10.1109/icstw55395.2022.00035")
    fresh_store.update(f"""INSERT DATA {{ GRAPH {CATALOG} {{ {known} a bibo:Document ;
        dcterms:title "Known by its DOI" ; bibo:doi "10.1109/ICSTW55395.2022.00035" .
        <https://example.org/p> a bibo:Document ; dcterms:title "Known by its arXiv id" ;
            tkg:arxivId "1605.08386" }} }}""")
    ingest_arxiv(fresh_store, arxiv_source, ids=["2202.12139", "1605.08386"])
    subjects = {t.subject.value for t in fresh_store.triples(ARXIV) if t.predicate == TKG.arxivId}
    assert subjects == {known.value, "https://example.org/p"}


def test_an_id_the_api_does_not_return_is_reported_missing(fresh_store, arxiv_source) -> None:
    report = ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386", "0808.05394"])
    assert report.missing == ["0808.05394"] and report.counts()["missing"] == 1
    activity = fresh_store.select(
        f"""SELECT ?missing ?added WHERE {{ GRAPH <https://w3id.org/techkg/graph/provenance> {{
              {ARXIV} prov:wasGeneratedBy ?a . ?a tkg:missing ?missing ; tkg:added ?added }} }}""").records()
    assert activity == [{"missing": 1, "added": 1}]


def test_the_error_feed_names_the_rejected_id_and_nothing_is_written(fresh_store, arxiv_source, dataset) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386"])
    before = dataset(fresh_store)
    with pytest.raises(IngestError) as caught:
        ingest_arxiv(fresh_store, arxiv_source, ids=["1707.08567", "abc"])
    assert "'abc'" in caught.value.message and "incorrect id format" in caught.value.message
    assert caught.value.status == 400 and "abc" in caught.value.hint
    assert dataset(fresh_store) == before


def test_catalog_and_reading_list_ids_go_in_batches_of_at_most_100(built_store, replay, fast) -> None:
    ids = tracked_ids(built_store)
    assert len(ids) > 40
    extra = [f"2301.{n:05d}" for n in range(150)]
    source = ArxivSource(client=fast("arxiv"), api_url=replay.arxiv_url)
    report = ingest_arxiv(built_store, source, ids=ids + extra)
    batches = [len(s.query["id_list"][0].split(",")) for s in replay.requests("/api/query")]
    assert sum(batches) == len(ids) + 150 and max(batches) == 100 and len(batches) == -(-(len(ids) + 150) // 100)
    # The replay server knows none of these papers: each one is reported, none dropped in silence.
    assert len(report.missing) == len(ids) + 150


def test_search_results_are_candidates_off_the_reading_list(built_store, arxiv_source) -> None:
    report = ingest_arxiv(built_store, arxiv_source, query="testing", max_results=10)
    assert report.mode == "search" and len(report.added) == 10
    candidates = built_store.select("SELECT ?p WHERE { ?p tkg:candidate true }")
    assert len(candidates) == 10
    on_list = built_store.select("SELECT ?p WHERE { ?p tkg:candidate true ; tkg:readingStatus ?s }")
    assert len(on_list) == 0


def test_search_with_to_read_puts_the_results_on_the_reading_list(built_store, arxiv_source) -> None:
    ingest_arxiv(built_store, arxiv_source, query="testing", max_results=15, to_read=True)
    rows = built_store.select("""SELECT ?p WHERE { GRAPH <https://w3id.org/techkg/graph/arxiv> { ?p tkg:arxivId ?i }
                                   ?p tkg:readingStatus <https://w3id.org/techkg/id/status/to-read> }""")
    assert len(rows) == 15
    assert len(built_store.select("SELECT ?p WHERE { ?p tkg:candidate true }")) == 0


def test_an_incremental_run_keeps_what_earlier_runs_found(fresh_store, arxiv_source) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386"])
    report = ingest_arxiv(fresh_store, arxiv_source, ids=["1707.08567", "1605.08386"])
    assert report.added == ["1707.08567"] and report.unchanged == ["1605.08386"]
    titled = {t.subject.value for t in fresh_store.triples(ARXIV) if t.predicate == DCTERMS.title}
    assert titled == {PAPER.value, "https://arxiv.org/abs/1707.08567"}


def test_a_run_that_changes_nothing_is_still_recorded_as_an_activity(fresh_store, arxiv_source) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386"])
    first = fresh_store.select(f"SELECT ?a WHERE {{ GRAPH ?g {{ {ARXIV} prov:wasGeneratedBy ?a }} }}").records()
    report = ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386"])
    second = fresh_store.select(
        f"""SELECT ?a ?unchanged ?used ?start ?end ?version WHERE {{ GRAPH ?g {{ {ARXIV} prov:wasGeneratedBy ?a .
              ?a tkg:unchanged ?unchanged ; prov:used ?used ; prov:startedAtTime ?start ; prov:endedAtTime ?end ;
              prov:wasAssociatedWith/schema:softwareVersion ?version }} }}""").records()
    assert report.unchanged == ["1605.08386"] and len(second) == 1 and second[0]["a"] != first[0]["a"]
    assert second[0]["unchanged"] == 1 and second[0]["used"].endswith("/api/query")
    assert second[0]["start"] <= second[0]["end"] and second[0]["version"]


def test_offline_answers_from_the_cache_and_names_what_is_missing(fresh_store, arxiv_source, replay) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386", "2104.12255v1"])
    from ingest.http import Politeness, build_client, cache_for

    cache = cache_for(arxiv_source.client)
    offline = ArxivSource(client=build_client("arxiv", cache=cache, offline=True, politeness=Politeness(0)),
                          api_url=replay.arxiv_url)
    served = len(replay.log)
    report = ingest_arxiv(fresh_store, offline, ids=["1605.08386", "2104.12255v1"])
    assert report.unchanged == ["1605.08386", "2104.12255"] and len(replay.log) == served
    assert stats_for(offline.client).from_cache == 1 and stats_for(offline.client).requests == 0
    with pytest.raises(OfflineError) as caught:
        ingest_arxiv(fresh_store, offline, ids=["1707.08567"])
    assert "1707.08567" in caught.value.message and "without --offline" in caught.value.hint


def test_dates_and_versions_are_typed(fresh_store, arxiv_source) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386"])
    issued = next(t.object for t in fresh_store.triples(ARXIV) if t.predicate == DCTERMS.issued)
    version = next(t.object for t in fresh_store.triples(ARXIV) if t.predicate == TKG.arxivVersion)
    assert issued.datatype == XSD.dateTime and version.datatype == XSD.integer
    assert ox.Triple(PAPER, RDF.type, BIBO.Document) in fresh_store.triples(ARXIV)
    assert ox.Triple(PAPER, TKG.arxivId, text("1605.08386", None)) in fresh_store.triples(ARXIV)


def test_search_pages_through_results_with_the_requested_page_size(fresh_store, replay, fast) -> None:
    source = ArxivSource(client=fast("arxiv"), api_url=replay.arxiv_url)
    records = source.search("testing", max_results=15)
    assert len(records) == 15 and len({r.id for r in records}) == 15
    assert [s.query["max_results"] for s in replay.requests("/api/query")] == [["15"]]


def test_search_rejects_a_zero_maximum(arxiv_source: ArxivSource) -> None:
    with pytest.raises(IngestError):
        arxiv_source.search("testing", max_results=0)


def test_replay_server_answers_from_the_recordings(replay: ReplayServer) -> None:
    # Guards the harness: the exact recorded query gets the recorded bytes.
    import httpx

    from tests.conftest import FIXTURES

    url = (replay.arxiv_url + "?search_query=&id_list=1605.08386&sortBy=relevance&sortOrder=descending"
           "&start=0&max_results=100")
    recorded = (FIXTURES / "arxiv" / "atom" / "id_1605.08386_s0_m100_199195aa31ad.xml").read_bytes()
    assert httpx.get(url).content == recorded


def test_a_paper_fetched_by_id_does_not_become_a_candidate_when_a_search_finds_it(fresh_store, arxiv_source) -> None:
    ingest_arxiv(fresh_store, arxiv_source, ids=["2202.12139"])
    ingest_arxiv(fresh_store, arxiv_source, query="testing", max_results=10)
    flagged = {r["p"] for r in fresh_store.select("SELECT ?p WHERE { ?p tkg:candidate true }").records()}
    assert len(flagged) == 9 and "https://arxiv.org/abs/2202.12139" not in flagged
