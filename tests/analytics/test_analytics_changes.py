"""After changes beyond reading state, an incremental build touches only the answers whose
values changed (kg.analytics.changes): a fact restated by another graph changes none; a
changed value makes again the rows of the items that show it, wherever they are named;
and every answer and table is then the one a full build makes, row for row and in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from kg.analytics import build
from kg.graphs import graph_iri
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore
from kg.vocab import FOAF, RDF, SKOS, TKG, text
from tests.analytics.test_analytics_status_patch import answer_tables, assert_as_a_full_build


def _write(store: OxigraphStore, graph: str, insert: list[ox.Triple], delete: list[ox.Triple] = ()) -> None:
    with store.transaction(Activity("a test's write")) as tx:
        if delete:
            tx.delete(graph_iri(graph), list(delete))
        tx.insert(graph_iri(graph), insert)


def _one(store: OxigraphStore, sparql: str) -> dict[str, Any]:
    rows = store.select(sparql).rows
    assert rows, sparql
    return rows[0]


def test_facts_restated_by_another_graph_leave_every_answer_as_it_was(
        analysed_store: OxigraphStore, db_of: Any, tmp_path: Path) -> None:
    db = db_of(Path(analysed_store.location))
    found = _one(analysed_store, f"""SELECT ?person ?name ?tech ?label WHERE {{ GRAPH {graph_iri("bench")} {{
        ?person a foaf:Person ; foaf:name ?name . ?tech a tkg:Technique ; skos:prefLabel ?label }} }}
        ORDER BY ?person ?tech LIMIT 1""")
    _write(analysed_store, "import/restated", [
        ox.Triple(found["person"], FOAF.name, found["name"]),
        ox.Triple(found["tech"], SKOS.prefLabel, found["label"])])
    report = build(analysed_store, db)
    assert report.mode == "incremental"
    assert report.answers == {} and report.patched == {}  # the same values: no answer touched
    assert {"authors"} <= set(report.patched_tables)  # (the tables show which graph states a row)
    assert_as_a_full_build(analysed_store, db, tmp_path, "restated")


@pytest.mark.parametrize("case", ["an author's name", "a first author's name", "a reading section's label",
                                  "a technique's primary paper"])
def test_a_changed_value_remakes_the_rows_of_every_item_that_shows_it(
        analysed_store: OxigraphStore, db_of: Any, tmp_path: Path, case: str) -> None:
    db = db_of(Path(analysed_store.location))
    bench = graph_iri("bench")
    if case == "an author's name":  # named through author lists: bibliography
        person = _one(analysed_store, f"""SELECT ?p WHERE {{ GRAPH {bench} {{ ?l rdf:_2 ?p }} }}
                                          ORDER BY ?p LIMIT 1""")["p"]
        insert = [ox.Triple(person, FOAF.name, text("Zed Renamed-Author", None))]
        graph, shown = "import/names", ("bibliography", "Zed Renamed-Author")
    elif case == "a first author's name":  # named by tkg:firstAuthor
        paper = _one(analysed_store, """SELECT ?p WHERE { ?p tkg:readingCategory ?c } ORDER BY ?p LIMIT 1""")["p"]
        person = ox.NamedNode("https://w3id.org/techkg/id/person/test-first")
        _write(analysed_store, "import/first", [ox.Triple(paper, TKG.firstAuthor, person),
                                                 ox.Triple(person, RDF.type, FOAF.Person)])
        build(analysed_store, db)
        insert = [ox.Triple(person, FOAF.name, text("Ada First-Author", None))]
        graph, shown = "import/first-names", ("bibliography", "Ada First-Author")
    elif case == "a reading section's label":  # every paper listed in it: the reading queue
        section = _one(analysed_store, """SELECT ?c WHERE { ?p tkg:readingCategory ?c ;
            tkg:readingStatus <https://w3id.org/techkg/id/status/to-read> } ORDER BY ?c LIMIT 1""")["c"]
        insert = [ox.Triple(section, SKOS.prefLabel, text("Aardvark section", "en"))]
        graph, shown = "import/labels", ("reading-queue", "Aardvark section")
    else:  # the primary paper a technique names: the papers of the lineage
        tech = _one(analysed_store, f"""SELECT ?t WHERE {{ GRAPH {bench} {{ ?t a tkg:Technique }} }}
                                        ORDER BY ?t LIMIT 1""")["t"]
        paper = _one(analysed_store, """SELECT ?p WHERE { ?p tkg:readingStatus ?s } ORDER BY DESC(?p) LIMIT 1""")["p"]
        insert = [ox.Triple(tech, TKG.primaryPaper, paper)]
        graph, shown = "import/primary", ("lineage-paper-links", paper.value)
    _write(analysed_store, graph, insert)
    report = build(analysed_store, db)
    assert report.mode == "incremental"
    touched = {**report.answers, **report.patched}
    assert shown[0] in touched
    assert_as_a_full_build(analysed_store, db, tmp_path, "changed")
    rows = answer_tables(db)[shown[0]]  # (with its tail)
    assert any(shown[1] in str(cell) for row in rows for cell in row)
