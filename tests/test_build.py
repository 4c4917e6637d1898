"""kg build: idempotence, SHACL validity and precise violations."""

from __future__ import annotations

import pyoxigraph as ox

from kg.build import build
from kg.graphs import CATALOG
from kg.iris import technique_iri
from kg.validate import validate_store
from kg.vocab import TKG


def test_building_twice_gives_the_same_triple_count(built_store) -> None:
    before = built_store.count()
    report = build(built_store, validate=False, force=True)  # even when made to parse and compare everything
    assert report.changed == [] and set(report.unchanged) >= {"catalog", "ontology"}
    assert build(built_store, validate=False).up_to_date
    assert built_store.count() == before


def test_the_built_graph_conforms_to_the_shapes(built_store) -> None:
    assert validate_store(built_store) == []


def test_a_violation_names_node_property_and_fix(built_store) -> None:
    gdn = technique_iri("gated-deltanet")
    built_store.update(
        f"DELETE WHERE {{ GRAPH {CATALOG} {{ {gdn} tkg:onComparisonPage ?x }} }} ;"
        f"INSERT DATA {{ GRAPH {CATALOG} {{ {gdn} tkg:onComparisonPage \"yes\" . "
        f"{gdn} tkg:primaryPaper <https://example.org/not-a-paper> }} }}"
    )
    violations = validate_store(built_store)
    by_path = {v.path: v for v in violations if v.focus == gdn.value}
    assert TKG.onComparisonPage.value in by_path
    assert "on_page" in by_path[TKG.onComparisonPage.value].message
    assert "papers.toml" in by_path[TKG.primaryPaper.value].message


def test_an_on_page_technique_missing_a_dimension_is_reported(built_store) -> None:
    kda = technique_iri("kda")
    built_store.update(f"DELETE WHERE {{ GRAPH {CATALOG} {{ {kda} tkg:limitations ?x }} }}")
    messages = [v.message for v in validate_store(built_store) if v.focus == kda.value]
    assert any("dimensions.limitations" in m for m in messages), messages


def test_counts_after_build(built_store) -> None:
    rows = built_store.select("SELECT (COUNT(?t) AS ?n) WHERE { ?t a tkg:Technique ; tkg:onComparisonPage true }")
    assert int(rows.rows[0]["n"].value) == 39
    parents = built_store.select("SELECT ?t WHERE { ?t a tkg:Technique ; tkg:onComparisonPage false }")
    assert len(parents) == 6  # DeltaNet, Mamba2, sparsely-gated MoE, PPO, EAGLE, history-based load balancing (EPLB)
    derived = built_store.ask(
        "ASK { ?kda tkg:refines ?gdn ; prov:wasDerivedFrom ?gdn }",
        {"kda": technique_iri("kda"), "gdn": technique_iri("gated-deltanet")},
    )
    assert derived is True
    assert isinstance(built_store.triples(CATALOG)[0], ox.Triple)
