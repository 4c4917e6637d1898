"""RDF exports: JSON-LD that pyld expands to the very triples of the store, and Turtle,
N-Triples and N-Quads that parse back to them."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest
from pyld import jsonld

from exports.lineage import LineageOptions, build_lineage
from exports.privacy import is_private
from exports.rdf import (
    CONTEXT_URL,
    context,
    document_loader,
    export_statements,
    render_lineage_jsonld,
    render_rdf,
)
from kg.errors import ExportError
from kg.graphs import CATALOG, READING
from kg.vocab import PREFIXES


def store_quads(store) -> set[ox.Quad]:
    out = set()
    for g in store.named_graphs():
        out |= {ox.Quad(t.subject, t.predicate, t.object, g) for t in store.triples(g)}
    return out


def expand(doc: dict, **options) -> set[ox.Quad]:
    nquads = jsonld.to_rdf(doc, {"format": "application/n-quads", **options})
    return set(ox.parse(nquads.encode(), format=ox.RdfFormat.N_QUADS))


def test_published_context_has_one_prefix_per_namespace() -> None:
    assert context() == PREFIXES


def test_jsonld_of_the_whole_dataset_expands_to_the_stores_public_quads(private_store) -> None:
    doc = json.loads(render_rdf(private_store, "jsonld"))
    assert doc["@context"] == PREFIXES
    expected = {q for q in store_quads(private_store) if not is_private(q)}
    assert expand(doc) == expected
    assert len(expected) > 3000


def test_jsonld_with_everything_expands_to_every_quad_of_the_store(private_store) -> None:
    doc = json.loads(render_rdf(private_store, "jsonld", include_private=True))
    assert expand(doc) == store_quads(private_store)


def test_jsonld_of_one_graph_expands_to_that_graphs_triples(built_store) -> None:
    doc = json.loads(render_rdf(built_store, "jsonld", graph="catalog"))
    triples = {ox.Quad(q.subject, q.predicate, q.object) for q in expand(doc)}
    expected = {ox.Quad(t.subject, t.predicate, t.object) for t in built_store.triples(CATALOG)
                if not is_private(t)}
    assert triples == expected
    compact = json.dumps(doc)
    assert '"skos:prefLabel"' in compact and '"tkg:Technique"' in compact


def test_jsonld_can_refer_to_the_published_context_and_still_expand_offline(built_store) -> None:
    doc = json.loads(render_rdf(built_store, "jsonld", graph="catalog", context_ref="url"))
    assert doc["@context"] == CONTEXT_URL
    inline = json.loads(render_rdf(built_store, "jsonld", graph="catalog"))
    assert expand(doc, documentLoader=document_loader) == expand(inline)
    with pytest.raises(Exception, match="only serves"):
        document_loader("https://example.org/other-context.jsonld")


@pytest.mark.parametrize(("fmt", "syntax", "quads"), [
    ("turtle", ox.RdfFormat.TURTLE, False), ("ntriples", ox.RdfFormat.N_TRIPLES, False),
    ("nquads", ox.RdfFormat.N_QUADS, True), ("trig", ox.RdfFormat.TRIG, True),
])
def test_rdf_syntaxes_parse_back_to_the_exported_statements(private_store, fmt: str, syntax, quads: bool) -> None:
    data = render_rdf(private_store, fmt)
    parsed = set(ox.parse(data, format=syntax))
    exported = export_statements(private_store)
    if quads:
        assert parsed == set(exported)
    else:
        assert {ox.Triple(q.subject, q.predicate, q.object) for q in parsed} == {
            ox.Triple(q.subject, q.predicate, q.object) for q in exported}
    if fmt == "turtle":
        assert data.startswith(b"@prefix")
    if fmt in ("turtle", "trig"):  # our nodes by kind (technique:kda), never with an escaped slash
        assert b"\\/" not in data and b"technique:kda " in data
        assert b"@prefix technique: <https://w3id.org/techkg/id/technique/> ." in data


def test_a_private_graph_needs_include_private_and_an_unknown_graph_is_named(private_store) -> None:
    with pytest.raises(ExportError) as private:
        render_rdf(private_store, "turtle", graph="reading")
    assert "--include-private" in private.value.hint
    assert render_rdf(private_store, "ntriples", graph="reading", include_private=True)
    with pytest.raises(ExportError) as unknown:
        render_rdf(private_store, "turtle", graph="nope")
    assert "catalog" in unknown.value.hint
    assert READING not in {q.graph_name for q in export_statements(private_store)}


def test_lineage_jsonld_holds_the_stores_own_triples_about_its_nodes(built_store) -> None:
    lineage = build_lineage(built_store, LineageOptions(root="KDA", direction="up", with_papers=True))
    doc = json.loads(render_lineage_jsonld(lineage))
    triples = {ox.Triple(q.subject, q.predicate, q.object) for q in expand(doc)}
    store = set(built_store.triples())
    assert triples and triples <= store
    kda = ox.NamedNode("https://w3id.org/techkg/id/technique/kda")
    gdn = ox.NamedNode("https://w3id.org/techkg/id/technique/gated-deltanet")
    assert ox.Triple(kda, ox.NamedNode(PREFIXES["tkg"] + "refines"), gdn) in triples
    assert any(t.subject == ox.NamedNode("https://arxiv.org/abs/2412.06464") for t in triples)
