"""The SPARQL endpoint of `kg serve` under uvicorn, with SPARQLWrapper and plain httpx."""

from __future__ import annotations

import csv
import io
import json
import time
import xml.etree.ElementTree as ET

import httpx
import pyoxigraph as ox
import pytest
from SPARQLWrapper import CSV, JSON, TURTLE, XML, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed

from kg.graphs import graph_iri
from kg.iris import technique_iri
from kg.store.base import Activity
from kg.store.remote import RemoteStore
from tests.conftest import at_once

TECHNIQUES = "SELECT ?id WHERE { ?t a tkg:Technique ; skos:notation ?id ; tkg:onComparisonPage true } ORDER BY ?id"
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"  # 10^11 rows: hours
RESULTS = "http://www.w3.org/2005/sparql-results#"


@pytest.fixture
def endpoint(serve, built_store):
    with serve(built_store) as base:
        yield base


def wrapper(base: str, query: str, fmt: str) -> SPARQLWrapper:
    client = SPARQLWrapper(f"{base}/sparql")
    client.setQuery("PREFIX tkg: <https://w3id.org/techkg/ns#> PREFIX skos: <http://www.w3.org/2004/02/skos/core#> "
                    + query)
    client.setReturnFormat(fmt)
    return client


# -- SPARQLWrapper, an independent client --------------------------------------------------


def test_sparqlwrapper_reads_json_xml_and_csv_results(endpoint: str) -> None:
    doc = wrapper(endpoint, TECHNIQUES, JSON).queryAndConvert()
    ids = [b["id"]["value"] for b in doc["results"]["bindings"]]  # type: ignore[index]
    assert len(ids) == 39 and ids == sorted(ids) and "kda" in ids
    tree = wrapper(endpoint, TECHNIQUES, XML).queryAndConvert()
    assert len(tree.getElementsByTagName("result")) == 39  # type: ignore[union-attr]
    rows = list(csv.reader(io.StringIO(wrapper(endpoint, TECHNIQUES, CSV).queryAndConvert().decode())))  # type: ignore[union-attr]
    assert rows[0] == ["id"] and len(rows) == 40
    post = wrapper(endpoint, "ASK { ?t skos:notation 'kda' }", JSON)
    post.setMethod("POST")
    assert post.queryAndConvert()["boolean"] is True  # type: ignore[index]


def test_sparqlwrapper_gets_a_graph_as_turtle(endpoint: str) -> None:
    query = "CONSTRUCT { ?c tkg:refines ?p } WHERE { ?c tkg:refines ?p }"
    ttl = wrapper(endpoint, query, TURTLE).queryAndConvert()
    triples = list(ox.parse(ttl, format=ox.RdfFormat.TURTLE))  # type: ignore[arg-type]
    assert (technique_iri("kda"), technique_iri("gated-deltanet")) in {(t.subject, t.object) for t in triples}


def test_sparqlwrapper_sees_a_malformed_query_as_400_with_the_parser_message(endpoint: str) -> None:
    with pytest.raises(QueryBadFormed) as err:
        wrapper(endpoint, "SELECT WHERE {", JSON).queryAndConvert()
    assert "malformed" in str(err.value) and "line 1, column" in str(err.value)


# -- the protocol with plain httpx -----------------------------------------------------------


def test_query_by_get_post_form_and_post_body_agree(endpoint: str) -> None:
    url = f"{endpoint}/sparql"
    accept = {"Accept": "application/sparql-results+json"}
    answers = [
        httpx.get(url, params={"query": TECHNIQUES}, headers=accept),
        httpx.post(url, data={"query": TECHNIQUES}, headers=accept),
        httpx.post(url, content=TECHNIQUES.encode(), headers={**accept, "Content-Type": "application/sparql-query"}),
    ]
    bodies = [r.json() for r in answers]
    assert all(r.status_code == 200 and r.headers["content-type"] == "application/sparql-results+json" for r in answers)
    assert bodies[0] == bodies[1] == bodies[2] and len(bodies[0]["results"]["bindings"]) == 39


@pytest.mark.parametrize("accept, media", [
    ("application/sparql-results+xml", "application/sparql-results+xml"),
    ("text/csv", "text/csv; charset=utf-8"),
    ("text/tab-separated-values", "text/tab-separated-values; charset=utf-8"),
    ("application/json", "application/sparql-results+json"),
    ("text/html,application/xhtml+xml,*/*;q=0.8", "application/sparql-results+json"),
    ("text/csv;q=0.5, application/sparql-results+xml;q=0.9", "application/sparql-results+xml"),
])
def test_select_results_follow_the_accept_header(endpoint: str, accept: str, media: str) -> None:
    r = httpx.get(f"{endpoint}/sparql", params={"query": TECHNIQUES}, headers={"Accept": accept})
    assert r.status_code == 200 and r.headers["content-type"] == media
    if "xml" in media:
        assert len(ET.fromstring(r.content).findall(f".//{{{RESULTS}}}result")) == 39
    elif "csv" in media or "tab" in media:
        assert len(r.text.strip().splitlines()) == 40


@pytest.mark.parametrize("accept, fmt", [
    ("text/turtle", ox.RdfFormat.TURTLE),
    ("application/n-triples", ox.RdfFormat.N_TRIPLES),
    ("application/ld+json", ox.RdfFormat.JSON_LD),
    ("application/rdf+xml", ox.RdfFormat.RDF_XML),
])
def test_graphs_follow_the_accept_header(endpoint: str, accept: str, fmt: ox.RdfFormat) -> None:
    query = f"DESCRIBE {technique_iri('kda')}"
    r = httpx.post(f"{endpoint}/sparql", data={"query": query}, headers={"Accept": accept})
    assert r.status_code == 200 and r.headers["content-type"].startswith(accept)
    triples = list(ox.parse(r.content, format=fmt))
    assert len(triples) > 20 and all(t.subject == technique_iri("kda") for t in triples)


def test_a_format_parameter_overrides_accept_and_unknown_types_get_406(endpoint: str) -> None:
    r = httpx.get(f"{endpoint}/sparql", params={"query": TECHNIQUES, "format": "csv"},
                  headers={"Accept": "text/turtle"})
    assert r.headers["content-type"].startswith("text/csv")
    refused = httpx.get(f"{endpoint}/sparql", params={"query": TECHNIQUES}, headers={"Accept": "image/png"})
    assert refused.status_code == 406 and "application/sparql-results+json" in refused.text
    graph_as_csv = httpx.get(f"{endpoint}/sparql", params={"query": "CONSTRUCT WHERE { ?s a tkg:Technique }",
                                                           "format": "csv"})
    assert graph_as_csv.status_code == 406 and "turtle" in graph_as_csv.text


def test_cors_is_off_by_default_and_on_only_for_the_origins_the_user_allows(serve, built_store) -> None:
    preflight = {"Origin": "https://yasgui.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"}
    with serve(built_store) as base:
        pre = httpx.options(f"{base}/sparql", headers=preflight)
        assert "access-control-allow-origin" not in pre.headers
        r = httpx.get(f"{base}/sparql", params={"query": "ASK {}"}, headers={"Origin": "https://yasgui.example"})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    with serve(built_store, cors_origins=("https://yasgui.example",)) as base:
        pre = httpx.options(f"{base}/sparql", headers=preflight)
        assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == "https://yasgui.example"
        assert "POST" in pre.headers["access-control-allow-methods"]
        for path in ("/sparql?query=ASK%7B%7D", "/queries", "/store?default"):
            r = httpx.get(base + path, headers={"Origin": "https://yasgui.example"})
            assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://yasgui.example"
            other = httpx.get(base + path, headers={"Origin": "https://elsewhere.example"})
            assert "access-control-allow-origin" not in other.headers
        refused = httpx.options(f"{base}/sparql", headers={**preflight, "Origin": "https://elsewhere.example"})
        assert refused.status_code == 400 and "access-control-allow-origin" not in refused.headers


@pytest.mark.parametrize("query", ["SELECT WHERE {", "SELEKT * WHERE { ?s ?p ?o }", "SELECT * WHERE { ?s ?p ?o ",
                                   "INSERT DATA { <http://x/a> <http://x/b> 1 }", "SELECT ?x WHERE { ?x unknown:p 1 }"])
def test_a_malformed_query_gets_400_with_the_reason_never_500(endpoint: str, query: str) -> None:
    r = httpx.post(f"{endpoint}/sparql", data={"query": query}, headers={"Accept": "application/json"})
    assert r.status_code == 400
    body = r.json()
    assert body["ok"] is False and body["error"] and body["hint"]


def test_dataset_parameters_big_bodies_and_odd_requests_get_clear_4xx(serve, built_store) -> None:
    with serve(built_store, max_body=1000) as base:
        url = f"{base}/sparql"
        r = httpx.get(url, params={"query": TECHNIQUES, "default-graph-uri": "not an iri"})
        assert r.status_code == 400 and "absolute IRI" in r.text
        r = httpx.post(url, data={"update": "DROP ALL", "using-graph-uri": graph_iri("catalog").value})
        assert r.status_code == 400 and "using-graph-uri" in r.text
        big = httpx.post(url, content=b"SELECT * WHERE { ?s ?p ?o }" + b" " * 2000,
                         headers={"Content-Type": "application/sparql-query"})
        assert big.status_code == 413 and "1000 bytes" in big.text
        assert httpx.post(url, content=b"x", headers={"Content-Type": "text/plain"}).status_code == 415
        assert httpx.get(url, params={"update": "DROP ALL"}).status_code == 405
        both = httpx.post(url, data={"query": "ASK {}", "update": "DROP ALL"})
        assert both.status_code == 400 and "not both" in both.text


def test_without_a_query_the_endpoint_describes_itself(endpoint: str) -> None:
    r = httpx.get(f"{endpoint}/sparql", headers={"Accept": "text/turtle"})
    triples = list(ox.parse(r.content, format=ox.RdfFormat.TURTLE))
    sd = "http://www.w3.org/ns/sparql-service-description#"
    assert ox.NamedNode(sd + "UnionDefaultGraph") in {t.object for t in triples}
    assert ox.NamedNode(f"{endpoint}/sparql") in {t.object for t in triples}
    browser = httpx.get(f"{endpoint}/sparql", headers={"Accept": "text/html"}, follow_redirects=True)
    assert browser.status_code == 200 and "TechKG" in browser.text and "/queries/ancestors" in browser.text


# -- read-only by default; updates with the token ------------------------------------------


def test_updates_are_refused_unless_allowed_and_authorised(serve, built_store) -> None:
    update = 'INSERT DATA { GRAPH <https://w3id.org/techkg/graph/t> { <http://x/a> <http://x/b> "c" } }'
    with serve(built_store) as base:
        r = httpx.post(f"{base}/sparql", data={"update": update}, headers={"Authorization": "Bearer anything"})
        assert r.status_code == 403 and "read-only" in r.text and "--allow-update" in r.text
    with serve(built_store, allow_update=True, token="t0ken") as base:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic t0ken"}):
            r = httpx.post(f"{base}/sparql", content=update.encode(),
                           headers={"Content-Type": "application/sparql-update", **headers})
            assert r.status_code == 403 and "token" in r.text
        assert built_store.count(graph_iri("t")) == 0
        ok = httpx.post(f"{base}/sparql", data={"update": update}, headers={"Authorization": "Bearer t0ken"})
        assert ok.status_code == 204 and built_store.count(graph_iri("t")) == 1
        bad = httpx.post(f"{base}/sparql", data={"update": "INSERT DATA {"}, headers={"Authorization": "Bearer t0ken"})
        assert bad.status_code == 400


def test_a_clients_update_leaves_no_recorded_graph_size_behind_it(serve, built_store) -> None:
    from kg.graphs import CATALOG, PROVENANCE

    def sizes() -> dict[str, int]:
        return {i.graph.value: i.triples for i in built_store.graph_info()}

    before = sizes()
    delete = (f"PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\n"
              f"DELETE WHERE {{ GRAPH {CATALOG} {{ ?t skos:notation 'zero' }} }} ; # one technique's id")
    with serve(built_store, allow_update=True, token="t0ken") as base:
        ok = httpx.post(f"{base}/sparql", data={"update": delete}, headers={"Authorization": "Bearer t0ken"})
        assert ok.status_code == 204
    after = sizes()
    assert after[CATALOG.value] == before[CATALOG.value] - 1 == built_store.count(CATALOG)
    others = set(before) - {CATALOG.value, PROVENANCE.value}  # (the catalog's record lost its count)
    assert {g: after[g] for g in others} == {g: before[g] for g in others}


def test_a_remote_store_can_write_through_the_endpoint_with_its_token(serve, built_store,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    g = graph_iri("via-endpoint")
    triple = ox.Triple(ox.NamedNode("http://x/a"), ox.NamedNode("http://x/b"), ox.Literal("c"))
    with serve(built_store, allow_update=True, token="t0ken") as base:
        monkeypatch.setenv("KG_STORE_TOKEN", "t0ken")
        with RemoteStore.from_spec(f"{base}/sparql") as remote:
            with remote.transaction(Activity("through kg serve")) as tx:
                tx.replace_graph(g, [triple])
            assert remote.count(g) == 1 and remote._server_union is True
            assert {i.graph.value: i.activity for i in remote.graph_info()}[g.value] == "through kg serve"
    assert built_store.count(g) == 1


# -- limits ---------------------------------------------------------------------------------


def test_a_query_past_the_timeout_is_stopped_and_the_next_one_is_answered(serve, built_store) -> None:
    with serve(built_store, timeout=0.5, workers=1) as base:
        started = time.monotonic()
        r = httpx.post(f"{base}/sparql", data={"query": RUNAWAY}, headers={"Accept": "application/json"}, timeout=30)
        assert r.status_code == 503 and time.monotonic() - started < 5
        assert "timeout of 0.5 s" in r.json()["error"] and "stopped" in r.json()["error"]
        assert "--timeout" in r.json()["hint"] and "retry-after" not in r.headers
        # The one worker was stopped and replaced: the next query does not wait for RUNAWAY.
        started = time.monotonic()
        ok = httpx.get(f"{base}/sparql", params={"query": "ASK {}"}, timeout=30)
        assert ok.status_code == 200 and time.monotonic() - started < 3


def test_a_result_over_the_row_limit_gets_422_naming_the_limit(serve, built_store) -> None:
    with serve(built_store, max_rows=10) as base:
        r = httpx.get(f"{base}/sparql", params={"query": TECHNIQUES}, headers={"Accept": "application/json"})
        assert r.status_code == 422 and "more than 10 rows" in r.json()["error"] and "--max-rows" in r.json()["hint"]
        graph = httpx.get(f"{base}/sparql", params={"query": "CONSTRUCT WHERE { ?s a tkg:Technique }"})
        assert graph.status_code == 422 and "limit of 10" in graph.text
        ok = httpx.get(f"{base}/sparql", params={"query": TECHNIQUES + " LIMIT 10"})
        assert ok.status_code == 200 and len(ok.json()["results"]["bindings"]) == 10


def test_queries_run_concurrently_in_workers(serve, built_store) -> None:
    with serve(built_store, workers=4) as base:
        codes = at_once(lambda: httpx.get(f"{base}/sparql", params={"query": TECHNIQUES}, timeout=30).status_code, 4)
        assert codes == [200] * 4


# -- named queries as URLs ------------------------------------------------------------------


def test_named_queries_have_their_own_urls(endpoint: str) -> None:
    listing = httpx.get(f"{endpoint}/queries").json()
    names = {q["name"]: q for q in listing}
    assert len(names) >= 15 and names["ancestors"]["params"][0]["name"] == "technique"
    assert names["ancestors"]["url"] == f"{endpoint}/queries/ancestors"
    r = httpx.get(names["ancestors"]["url"], params={"technique": "KDA"})
    rows = r.json()["results"]["bindings"]
    assert ("Gated DeltaNet", "refines") in {(b["ancestorName"]["value"], b["relation"]["value"]) for b in rows}
    as_csv = httpx.get(f"{endpoint}/queries/compare-techniques",
                       params=[("technique", "GDN"), ("technique", "KDA"), ("format", "csv")])
    assert as_csv.headers["content-type"].startswith("text/csv") and len(as_csv.text.strip().splitlines()) == 1 + 28
    posted = httpx.post(f"{endpoint}/queries/descendants", data={"technique": "MQA"})
    assert "Grouped-Query Attention" in {b["descendantName"]["value"] for b in posted.json()["results"]["bindings"]}
    text = httpx.get(f"{endpoint}/queries/ancestors.rq")
    assert text.headers["content-type"].startswith("application/sparql-query") and "# title:" in text.text
    ttl = httpx.get(f"{endpoint}/queries/lineage-subgraph", params={"technique": "KDA"})
    assert ttl.headers["content-type"].startswith("text/turtle") and "tkg:refines" in ttl.text


def test_named_query_errors_name_the_parameter(endpoint: str) -> None:
    missing = httpx.get(f"{endpoint}/queries/ancestors", headers={"Accept": "application/json"})
    assert missing.status_code == 400 and "'technique'" in missing.json()["error"]
    assert "technique (a technique name" in missing.json()["error"]
    wrong = httpx.get(f"{endpoint}/queries/stale-repositories", params={"months": "soon"})
    assert wrong.status_code == 400 and "integer" in wrong.text
    unknown = httpx.get(f"{endpoint}/queries/ancestor")
    assert unknown.status_code == 404 and "ancestors" in unknown.text
    nobody = httpx.get(f"{endpoint}/queries/ancestors", params={"technique": "no such thing at all"})
    assert nobody.status_code == 404 and "no technique" in nobody.text
    injected = httpx.get(f"{endpoint}/queries/papers-by-author", params={"author": '"} UNION { ?s ?p ?o }'})
    assert injected.status_code == 200 and injected.json()["results"]["bindings"] == []


def test_the_index_lists_the_endpoints(endpoint: str) -> None:
    page = httpx.get(endpoint + "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert f"{endpoint}/sparql" in page.text and "/queries/compare-techniques" in page.text
    assert json.loads(httpx.get(f"{endpoint}/queries").text)
