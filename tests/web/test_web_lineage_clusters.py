"""The workbench's lineage of a store with many techniques from outside the catalog: the
catalog's techniques, each with the others that derive from it folded into one cluster
node, laid out and served (and a cluster opens as the lineage under its technique)."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

import exports.lineage
from bench.corpus import generate
from exports.lineage import CLUSTER_PREFIX, LineageOptions, build_lineage


@pytest.fixture
def many_techniques(built_store_dir: Path, tmp_path: Path):
    """The built graph plus a small synthetic corpus: techniques deriving from the catalog's."""
    from kg.graphs import graph_iri
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore

    shutil.copytree(built_store_dir, tmp_path / "store")
    corpus = generate(600, seed=7, out=tmp_path / "corpus.nt")
    store = OxigraphStore(tmp_path / "store")
    store.load_file(corpus.path, graph=graph_iri("corpus"), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                    activity=Activity("test load"))
    yield store, corpus
    store.close()


def test_a_lineage_with_many_outside_techniques_folds_them_under_their_catalog_ancestor(
        many_techniques, monkeypatch, workbench) -> None:
    store, corpus = many_techniques
    whole = build_lineage(store, LineageOptions(include_private=True))
    assert corpus.techniques > 3
    monkeypatch.setattr(exports.lineage, "FOLD_ABOVE", 3)
    folded = build_lineage(store, LineageOptions(include_private=True, clustered=True))
    clusters = {n: d for n, d in folded.graph.nodes(data=True) if d["kind"] == "cluster"}
    techniques = {n for n, d in folded.graph.nodes(data=True) if d["kind"] == "technique"}
    outside = {n for n, d in whole.graph.nodes(data=True) if d["kind"] == "technique"} - techniques
    assert clusters and outside
    assert sum(d["count"] for d in clusters.values()) == len(outside)  # every synthetic technique, once
    assert not any(n.startswith("http://bench.techkg.invalid/") for n in techniques)
    for node, data in clusters.items():
        assert node == CLUSTER_PREFIX + data["anchor"] and data["anchor"] in techniques

    from exports.dot import grid_positions, render_dot

    assert "derived technique" in render_dot(folded)
    positions = grid_positions(folded)
    assert positions is None or set(clusters) <= set(positions)  # None: no Graphviz here

    with workbench(store) as base, httpx.Client(base_url=base, timeout=120) as client:
        page = client.get("/lineage")
        assert page.status_code == 200, page.text[-2000:]
        assert "derived technique" in page.text and "/lineage?root=" in page.text
        anchor = folded.graph.nodes[next(iter(clusters))]["anchor"]
        slug = folded.graph.nodes[anchor].get("slug") or anchor
        opened = client.get("/lineage", params={"root": slug})
        assert opened.status_code == 200
        assert "derived technique" not in opened.text  # under a root, nothing is folded


def test_the_lineage_around_a_technique_shows_its_nearest_descendants_and_folds_the_rest(
        many_techniques, monkeypatch, workbench) -> None:
    store, _corpus = many_techniques
    monkeypatch.setattr(exports.lineage, "FOLD_ABOVE", 3)  # to find the catalog technique most derive from
    whole = build_lineage(store, LineageOptions(include_private=True, clustered=True))
    root = max((d for d in whole.graph.nodes(data=True) if d[1]["kind"] == "cluster"), key=lambda d: d[1]["count"])
    root_iri = root[1]["anchor"]
    everything = build_lineage(store, LineageOptions(root=root_iri, include_private=True))
    below = {n for n in everything.graph if n != root_iri} & set(nx_descendants(everything.graph, root_iri))
    assert len(below) > 8

    bounded = build_lineage(store, LineageOptions(root=root_iri, include_private=True, limit=8))
    techniques = {n for n, d in bounded.graph.nodes(data=True) if d["kind"] == "technique"}
    clusters = {n: d for n, d in bounded.graph.nodes(data=True) if d["kind"] == "cluster"}
    shown_below = techniques & below
    assert len(shown_below) == 8
    # the nearest first: no folded technique is fewer steps from the root than a shown one
    steps = nx_steps(everything.graph, root_iri)
    assert max(steps[n] for n in shown_below) <= min(steps[n] for n in below - shown_below)
    assert sum(d["count"] for d in clusters.values()) == len(below - shown_below)  # each folded one, once
    assert all(d["anchor"] in techniques for d in clusters.values())
    assert techniques - below == set(everything.graph) - below  # the root and its ancestors all stay

    with workbench(store) as base, httpx.Client(base_url=base, timeout=120) as client:
        slug = whole.graph.nodes[root_iri]["slug"]
        page = client.get("/lineage", params={"root": slug, "limit": "8"})
        assert page.status_code == 200, page.text[-2000:]
        assert "derived technique" in page.text
        more = client.get("/lineage", params={"root": slug, "limit": str(len(below))})
        assert more.status_code == 200 and "derived technique" not in more.text  # all of them shown


def nx_descendants(graph, node: str) -> set[str]:
    import networkx as nx

    lineage = nx.DiGraph((u, v) for u, v, d in graph.edges(data=True) if d["kind"] == "lineage")
    return nx.descendants(lineage, node) if node in lineage else set()


def nx_steps(graph, node: str) -> dict[str, int]:
    import networkx as nx

    lineage = nx.DiGraph((u, v) for u, v, d in graph.edges(data=True) if d["kind"] == "lineage")
    return dict(nx.single_source_shortest_path_length(lineage, node))
