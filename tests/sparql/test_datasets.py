"""Datasets: `FROM` / `FROM NAMED` in the query and the protocol's `default-graph-uri` /
`named-graph-uri` choose the graphs a query sees (the union is the default only when
neither names a dataset), and the read-only Graph Store Protocol serves each graph."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from kg.graphs import CATALOG, ONTOLOGY, READING
from tests.servers import KG

COUNT = "SELECT (COUNT(*) AS ?n) {clause} WHERE {{ ?s ?p ?o }}"
NAMED = "SELECT DISTINCT ?g {clause} WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}"


def _count(store: object, graph: ox.NamedNode | None = None) -> int:
    return store.count(graph)  # type: ignore[attr-defined, no-any-return]


def _n(response: httpx.Response) -> int:
    assert response.status_code == 200, response.text
    return int(response.json()["results"]["bindings"][0]["n"]["value"])


def _graphs(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    return {b["g"]["value"] for b in response.json()["results"]["bindings"]}


@pytest.fixture
def endpoint(serve, built_store):
    with serve(built_store) as base:
        yield base + "/sparql", built_store


def query(url: str, text: str, **params: object) -> httpx.Response:
    return httpx.post(url, data={"query": text, **params}, headers={"Accept": "application/json"}, timeout=30)


def test_from_and_from_named_in_the_query_are_honoured(endpoint) -> None:
    url, store = endpoint
    union = _n(query(url, COUNT.format(clause="")))
    catalog = _n(query(url, COUNT.format(clause=f"FROM {CATALOG}")))
    both = _n(query(url, COUNT.format(clause=f"FROM {CATALOG} FROM {ONTOLOGY}")))
    assert catalog == _count(store, CATALOG) and catalog < union
    assert both == _count(store, CATALOG) + _count(store, ONTOLOGY)
    assert _n(query(url, COUNT.format(clause=f"FROM NAMED {CATALOG}"))) == 0  # an empty default graph
    assert _graphs(query(url, NAMED.format(clause=f"FROM NAMED {CATALOG}"))) == {CATALOG.value}
    assert len(_graphs(query(url, NAMED.format(clause="")))) > 3


def test_the_protocols_dataset_wins_over_the_querys(endpoint) -> None:
    url, store = endpoint
    only_reading = query(url, COUNT.format(clause=f"FROM {CATALOG}"), **{"default-graph-uri": READING.value})
    assert _n(only_reading) == _count(store, READING)
    named = query(url, NAMED.format(clause=""), **{"named-graph-uri": [CATALOG.value, ONTOLOGY.value]})
    assert _graphs(named) == {CATALOG.value, ONTOLOGY.value}
    default_only = query(url, NAMED.format(clause=""), **{"default-graph-uri": CATALOG.value})
    assert _graphs(default_only) == set()  # no named graphs unless named-graph-uri says so
    get = httpx.get(url, params={"query": COUNT.format(clause=""), "default-graph-uri": CATALOG.value},
                    headers={"Accept": "application/json"})
    assert _n(get) == _count(store, CATALOG)


def test_kg_sparql_honours_from_and_the_dataset_options(built_store_path: Path) -> None:
    def run(text: str, *options: str) -> dict[str, object]:
        proc = subprocess.run([str(KG), "--store", str(built_store_path), "sparql", text, "-f", "json", *options],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)  # type: ignore[no-any-return]

    def count(clause: str, *options: str) -> int:
        return int(run(COUNT.format(clause=clause), *options)["results"]["bindings"][0]["n"]["value"])  # type: ignore[index]

    everything, catalog = count(""), count(f"FROM {CATALOG}")
    assert catalog < everything
    assert count("", "--default-graph-uri", "catalog") == catalog
    # The options replace the query's FROM, as the protocol's parameters do.
    assert count(f"FROM {CATALOG}", "--default-graph-uri", READING.value) < catalog
    named = run(NAMED.format(clause=""), "--named-graph-uri", "catalog", "--named-graph-uri", ONTOLOGY.value)
    assert {b["g"]["value"] for b in named["results"]["bindings"]} == {CATALOG.value, ONTOLOGY.value}  # type: ignore[index]
    bad = subprocess.run([str(KG), "--store", str(built_store_path), "sparql", "ASK {}", "--default-graph-uri",
                          "not an iri"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "not a graph name or IRI" in bad.stderr and "Traceback" not in bad.stderr


def test_the_graph_store_serves_each_graph_in_the_negotiated_format(endpoint) -> None:
    url, store = endpoint
    gsp = url.removesuffix("/sparql") + "/store"
    turtle = httpx.get(gsp, params={"graph": CATALOG.value})
    assert turtle.status_code == 200 and turtle.headers["content-type"].startswith("text/turtle")
    triples = set(ox.parse(turtle.content, format=ox.RdfFormat.TURTLE))
    assert triples == {ox.Quad(t.subject, t.predicate, t.object) for t in store.triples(CATALOG)}
    nt = httpx.get(gsp, params={"graph": CATALOG.value}, headers={"Accept": "application/n-triples"})
    assert nt.headers["content-type"] == "application/n-triples"
    assert len(list(ox.parse(nt.content, format=ox.RdfFormat.N_TRIPLES))) == len(triples)
    union = httpx.get(gsp + "?default", headers={"Accept": "application/n-triples"})
    assert len(set(ox.parse(union.content, format=ox.RdfFormat.N_TRIPLES))) == len(set(store.triples()))
    missing = httpx.get(gsp, params={"graph": "https://w3id.org/techkg/graph/nothing"})
    assert missing.status_code == 404 and "no graph" in missing.text
    for params in ({}, {"graph": CATALOG.value, "default": ""}, {"graph": "not an iri"}):
        assert httpx.get(gsp, params=params).status_code == 400
    assert httpx.get(gsp, params={"graph": CATALOG.value, "format": "csv"}).status_code == 406
    assert httpx.put(gsp, params={"graph": CATALOG.value}, content=b"").status_code == 405  # read-only
