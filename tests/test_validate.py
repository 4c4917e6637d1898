"""Validation: the shapes compiled to SPARQL agree with pySHACL, and the incremental run
evaluates only what a change can affect while giving the same answer as a full run."""

from __future__ import annotations

import time
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.graphs import CATALOG, PROVENANCE, READING, graph_iri
from kg.iris import technique_iri
from kg.shacl import UnsupportedShape, compile_shapes
from kg.validate import ValidationCache, pyshacl_violations, validate, validate_store

#: Breaks of the built graph, one per kind of constraint, each on a different node.
BREAKS = f"""
DELETE WHERE {{ GRAPH {CATALOG} {{ {technique_iri("gated-deltanet")} tkg:onComparisonPage ?x }} }} ;
DELETE WHERE {{ GRAPH {CATALOG} {{ {technique_iri("kda")} tkg:limitations ?x }} }} ;
INSERT DATA {{ GRAPH {CATALOG} {{
  {technique_iri("gated-deltanet")} tkg:onComparisonPage "yes" ;
      tkg:primaryPaper <https://example.org/not-a-paper> .
  {technique_iri("mla")} skos:prefLabel "Another name"@en , "Nom"@fr .
  {technique_iri("gqa")} dcterms:date "2024-13" .
  <https://example.org/p1> a bibo:Document ; dcterms:title "A paper" ; tkg:arxivId "2412.06464v2" ;
      tkg:hasNote "yes" .
  <https://example.org/p2> a bibo:Document .
  <https://example.org/repo> a schema:SoftwareSourceCode ; tkg:stars -3 .
  <https://example.org/ev> a tkg:Evidence ; schema:url "not an IRI" ; rdfs:label "Paper" .
  <https://example.org/k> a tkg:ReferenceKernel ; tkg:kernelForm "none" .
  <https://example.org/k2> a tkg:ReferenceKernel ; tkg:kernelForm "sometimes" ; tkg:rationale "x" .
  <https://example.org/d> a prov:Derivation ; prov:entity {technique_iri("mqa")} ; tkg:relation tkg:likes .
  <https://example.org/person> a foaf:Person .
}} }} ;
INSERT DATA {{ GRAPH {READING} {{
  <https://example.org/p1> tkg:readingStatus <https://example.org/not-a-status> .
  <https://example.org/untyped> tkg:readingStatus <https://w3id.org/techkg/id/status/read> .
  <https://example.org/blank-status> a tkg:ReadingStatus ; skos:prefLabel " " .
  <https://example.org/p4> a bibo:Document ; tkg:needsMetadata true .
}} }}
"""


def _nt(store) -> str:
    return "\n".join(f"{t.subject} {t.predicate} {t.object} ." for t in store.triples())


def _keys(violations) -> set[tuple[str, str, str]]:
    return {(v.focus, v.path or "", v.message) for v in violations}


def test_the_compiled_shapes_agree_with_pyshacl_on_a_graph_broken_in_every_way(built_store) -> None:
    assert validate_store(built_store) == []
    built_store.update(BREAKS)
    ours = validate_store(built_store)
    reference = pyshacl_violations(_nt(built_store))
    assert _keys(ours) == _keys(reference)
    assert len(_keys(ours)) >= 18  # every break above was found
    assert not any(v.focus.endswith('/p4') for v in ours)  # waiting for its metadata is fine
    # and values are reported where pySHACL reports them
    assert {(v.focus, v.value) for v in ours if v.value} <= {(v.focus, v.value) for v in reference if v.value}


def test_the_built_graph_conforms_for_pyshacl_too(built_store) -> None:
    assert pyshacl_violations(_nt(built_store)) == []


def test_a_violation_names_the_graphs_that_hold_the_offending_fact(built_store) -> None:
    built_store.update(f"INSERT DATA {{ GRAPH {graph_iri('import/extract')} {{ "
                       f"{technique_iri('kda')} dcterms:date \"2025\"^^xsd:gYear }} }}")
    (violation,) = validate_store(built_store)
    assert violation.path.endswith("/date") and set(violation.graphs) == {"catalog", "import/extract"}


def test_an_unsupported_shape_is_refused_not_half_checked() -> None:
    shapes = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
    ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property [ sh:path ( ex:a ex:b ) ; sh:minCount 1 ] ."""
    with pytest.raises(UnsupportedShape, match="single-IRI"):
        compile_shapes(shapes)
    closed = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
    ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:closed true ."""
    with pytest.raises(UnsupportedShape, match="closed"):
        compile_shapes(closed)


def test_an_incremental_run_evaluates_only_what_a_change_can_affect(built_store, tmp_path: Path) -> None:
    from kg.reading import resolve_paper, set_status

    cache = ValidationCache(tmp_path / "validation.json")
    first = validate(built_store, cache=cache)
    assert first.violations == [] and first.reused == 0
    again = validate(built_store, cache=cache)
    assert again.evaluated == 0 and again.changed_graphs == []
    set_status(built_store, resolve_paper(built_store, "GPipe"), "read")
    after_set = validate(built_store, cache=cache)
    assert set(after_set.changed_graphs) == {READING.value, PROVENANCE.value}
    assert 0 < after_set.evaluated < first.evaluated / 3
    # a break in the changed graph is found, and the answer is the full run's
    with built_store.transaction("a broken write") as tx:  # through a transaction: provenance records it
        tx.update(f"INSERT DATA {{ GRAPH {READING} {{ <https://example.org/p9> a bibo:Document ; "
                  "tkg:readingStatus <https://example.org/nope> } }", touches=[READING])
    incremental = validate(built_store, cache=cache)
    full = validate(built_store, full=True)
    assert _keys(incremental.violations) == _keys(full.violations) != set()


def test_finding_what_changed_counts_no_graph_whose_provenance_records_its_size(built_store, tmp_path: Path,
                                                                                monkeypatch) -> None:
    """Checking a store for changes read every quad (a COUNT per graph): minutes at 9M
    triples for a run that then evaluates nothing. Recorded sizes are read instead."""
    cache = ValidationCache(tmp_path / "validation.json")
    validate(built_store, cache=cache)
    recorded = {r["g"].value for r in built_store.select(
        f"SELECT ?g WHERE {{ GRAPH {PROVENANCE} {{ ?g tkg:tripleCount ?n }} }}")}
    assert CATALOG.value in recorded
    counted: list[str] = []
    real_count = built_store.count
    monkeypatch.setattr(built_store, "count", lambda graph=None: counted.append(graph.value) or real_count(graph))
    again = validate(built_store, cache=cache)
    assert again.evaluated == 0 and again.changed_graphs == []
    assert counted and not set(counted) & recorded  # only graphs without a recorded size are counted


def test_validating_the_built_graph_is_fast(built_store) -> None:
    validate(built_store)  # compiles the shapes once per process
    started = time.perf_counter()
    validate(built_store, full=True)
    assert time.perf_counter() - started < 5  # pySHACL took 6-9 s here; the bench measures it precisely


def test_an_import_is_validated_incrementally_with_the_answer_of_a_full_run(built_store, tmp_path: Path) -> None:
    """After an import only the constraints its vocabulary can touch are evaluated, over the
    whole union: a new type or a new value the import gives a node of another graph makes
    a violation there, a fact it adds fixes one, and a violation in a graph it leaves alone
    stays (reused, not evaluated again). Dropping the import gives the first answer back."""
    from kg.store.base import Activity

    cache = ValidationCache(tmp_path / "validation.json")
    with built_store.transaction("a broken write") as tx:  # a violation in a graph the import leaves alone
        tx.update(f"INSERT DATA {{ GRAPH {READING} {{ <https://example.org/p9> a bibo:Document ; "
                  "tkg:readingStatus <https://example.org/nope> } }", touches=[READING])
    before = validate(built_store, cache=cache)
    assert _keys(before.violations) == _keys(validate(built_store, full=True).violations)
    assert {v.focus for v in before.violations} == {"https://example.org/p9"}  # no title, and the status

    mla, gqa = technique_iri("mla"), technique_iri("gqa")
    extra = tmp_path / "extra.nt"
    extra.write_text(
        f"{mla} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://w3id.org/techkg/ns#ReferenceKernel> .\n"
        f"{gqa} <http://www.w3.org/2004/02/skos/core#broader> <https://w3id.org/techkg/id/category/moe> .\n"
        '<https://example.org/p9> <http://purl.org/dc/terms/title> "A title at last" .\n', encoding="utf-8")
    imported = graph_iri("import/extra")
    built_store.load_file(extra, graph=imported, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                          activity=Activity("kg import rdf"))
    after = validate(built_store, cache=cache)
    full = validate(built_store, full=True)
    assert _keys(after.violations) == _keys(full.violations)
    found = {(v.focus, v.path or "") for v in after.violations}
    assert (mla.value, "https://w3id.org/techkg/ns#kernelForm") in found  # its new type, from the import
    assert (gqa.value, "http://www.w3.org/2004/02/skos/core#broader") in found  # a second category
    assert ("https://example.org/p9", "https://w3id.org/techkg/ns#readingStatus") in found  # unchanged graph
    assert ("https://example.org/p9", "") not in found  # its missing title, given by the import
    assert imported.value in after.changed_graphs and READING.value not in after.changed_graphs
    assert 0 < after.evaluated < full.evaluated / 2 and after.reused > 0

    with built_store.transaction("drop the import") as tx:
        tx.update(f"DROP GRAPH {imported}", touches=[imported])
    dropped = validate(built_store, cache=cache)
    assert _keys(dropped.violations) == _keys(validate(built_store, full=True).violations) == _keys(before.violations)


def test_the_lookup_and_the_anti_join_form_of_a_constraint_give_the_same_answer(built_store) -> None:
    """Which of the two forms runs depends on how many rows a constraint tests; both must
    find the same violations (here on the graph broken in every way)."""
    from kg.shacl import subclass_closure, with_subclasses
    from kg.validate import shapes_text

    built_store.update(BREAKS)
    pairs = [(str(r["sub"]), str(r["sup"])) for r in built_store.select(
        "SELECT ?sub ?sup WHERE { ?sub rdfs:subClassOf ?sup FILTER(isIRI(?sub) && isIRI(?sup)) }").records()]
    below = subclass_closure(pairs)

    def answer(query: str) -> set[tuple[str, ...]]:
        return {tuple(str(v) for v in r.values()) for r in built_store.select(with_subclasses(query, below)).records()}

    both = [c for c in compile_shapes(shapes_text()) if c.lookup is not None]
    assert len({c.id.split(":")[0] for c in both}) >= 4  # minCount, hasValue, class, or
    found = 0
    for c in both:
        assert answer(c.query) == answer(c.lookup), c.id
        found += len(answer(c.query))
    assert found >= 5


def test_max_count_counts_distinct_terms_not_distinct_values(built_store) -> None:
    """1 and 1.0 are two values for SHACL (two RDF terms), though equal as numbers: the
    compiled query compared them with != and missed that a category has two labels."""
    built_store.update(f"""INSERT DATA {{ GRAPH {CATALOG} {{ <https://example.org/cat> a tkg:ReadingListCategory ;
        skos:prefLabel 1 , 1.0 . }} }}""")
    ours = {(v.focus, v.path) for v in validate_store(built_store)}
    assert ours == {("https://example.org/cat", "http://www.w3.org/2004/02/skos/core#prefLabel")}
    assert ours == {(v.focus, v.path) for v in pyshacl_violations(_nt(built_store))}


def test_a_sparql_constraint_runs_only_for_focus_nodes_with_the_triples_it_requires() -> None:
    from kg.shacl import _required_of_this

    query = """PREFIX ex: <http://example.org/> SELECT $this ?m WHERE {
        $this ex:on true ; ex:kind ex:K . OPTIONAL { $this ex:opt ex:O }
        { $this ex:u1 ex:A } UNION { $this ex:u2 ex:B }
        FILTER NOT EXISTS { $this ex:not ex:C } ?other ex:p ex:D . $this ex:var ?v }"""
    assert sorted(_required_of_this(query)) == [
        '<http://example.org/kind> <http://example.org/K>',
        '<http://example.org/on> "true"^^<http://www.w3.org/2001/XMLSchema#boolean>']
    counted = "PREFIX ex: <http://example.org/> SELECT $this (COUNT(*) AS ?n) WHERE { $this ex:on true } GROUP BY $this"
    assert _required_of_this(counted) == []
