"""kg.open_graph(): the store as a read-only rdflib Dataset, through oxrdflib."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import SKOS

import kg
from kg.errors import KGError

GDN = URIRef("https://w3id.org/techkg/id/technique/gated-deltanet")


def test_the_dataset_is_the_union_of_the_named_graphs_with_our_prefixes(built_store_path: Path) -> None:
    graph = kg.open_graph(built_store_path)
    try:
        assert graph.value(GDN, SKOS.prefLabel) == Literal("Gated DeltaNet", lang="en")
        rows = list(graph.query("SELECT ?p WHERE { ?t tkg:refines ?p } ORDER BY ?p"))
        assert (URIRef(GDN),) in rows  # KDA refines Gated DeltaNet, from the catalog graph
        statuses = list(graph.query("SELECT (COUNT(?p) AS ?n) WHERE { ?p tkg:readingStatus ?s }"))
        assert int(statuses[0][0]) == 53  # the reading graph too
    finally:
        graph.close()


def test_the_dataset_refuses_writes_and_the_store_is_unchanged(built_store_path: Path) -> None:
    graph = kg.open_graph(built_store_path)
    before = len(graph)
    with pytest.raises(Exception, match="read"):
        graph.add((URIRef("urn:x:a"), URIRef("urn:x:b"), URIRef("urn:x:c")))
    graph.close()
    again = kg.open_graph(built_store_path)
    assert len(again) == before
    again.close()


def test_it_reads_while_a_writer_holds_the_store(built_store_path: Path) -> None:
    from kg.reading import resolve_paper, set_status
    from kg.store.embedded import OxigraphStore

    writer = OxigraphStore(built_store_path)
    try:
        set_status(writer, resolve_paper(writer, "GPipe"), "read")
        graph = kg.open_graph(built_store_path)  # no waiting: readers see the last committed state
        try:
            read = list(graph.query("SELECT ?p WHERE { ?p tkg:readingStatus <https://w3id.org/techkg/id/status/read> ;"
                                    " dcterms:title ?t FILTER(STRSTARTS(?t, 'GPipe')) }"))
            assert len(read) == 1
        finally:
            graph.close()
    finally:
        writer.close()


def test_an_endpoint_is_pointed_elsewhere() -> None:
    with pytest.raises(KGError) as err:
        kg.open_graph("http://127.0.0.1:9/sparql")
    assert "SPARQLStore" in (err.value.hint or "")


def test_importing_kg_does_not_import_rdflib() -> None:
    import subprocess
    import sys

    code = "import sys, kg; print('rdflib' in sys.modules, 'oxrdflib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False False"
