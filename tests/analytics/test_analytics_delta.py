"""A graph a command changed through transactions is staged from what they inserted and
deleted (kg.analytics.delta), not read again whole, and the tables are then the ones a
full build makes, row for row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

import kg.analytics.materialize as materialize
from kg import derived
from kg.analytics.keeper import TablesKeeper
from kg.graphs import graph_iri
from kg.linking.apply import link_papers
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore
from kg.vocab import BIBO, DCTERMS, RDF, TKG, text
from tests.analytics.test_analytics_status_patch import assert_as_a_full_build

NEW = [ox.NamedNode(f"https://doi.org/10.5555/techkg.delta-{i}") for i in range(3)]


@pytest.fixture
def reports(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The reports of the builds the keeper runs."""
    made: list[Any] = []
    real = materialize.build

    def build(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(materialize, "build", build)
    return made


def _kept(store: OxigraphStore, write: Any) -> list[str]:
    """``write(store)`` watched as the CLI watches a command; the keeper's lines."""
    said: list[str] = []
    watch = derived.watch(store, [TablesKeeper()])
    assert watch.tokens[0][1] is not None  # fresh before
    write(store)
    watch.finish(said.append)
    return said


def _new_papers(store: OxigraphStore) -> None:
    triples = []
    for i, paper in enumerate(NEW):
        triples += [ox.Triple(paper, RDF.type, BIBO.Document),
                    ox.Triple(paper, DCTERMS.title, text(f"Gated DeltaNet and ZeRO at scale, part {i}", None)),
                    ox.Triple(paper, DCTERMS.abstract,
                              text("We train with ZeRO and extend Gated DeltaNet with a chunked form.", None))]
    with store.transaction(Activity("a test's import")) as tx:
        tx.replace_graph(graph_iri("import/delta-test"), triples)
    report = link_papers(store, [p.value for p in NEW])  # kg link's write: one transaction into links
    assert report.links, "the new papers should be linked"


def test_linking_new_papers_stages_the_links_from_their_change_as_a_full_build_would(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    assert _kept(analysed_store, _new_papers) == []
    report = reports[-1]
    assert report.mode == "incremental"
    assert report.from_changes == ["links"]  # the new import graph has no change said: read whole
    assert sorted(report.changed_graphs) == ["import/delta-test", "links"]
    assert_as_a_full_build(analysed_store, db_of(Path(analysed_store.location)), tmp_path, "linked")


def _corpus_papers(store: OxigraphStore, tmp_path: Path) -> list[str]:
    """Papers of their own, drawn as the test corpus is (the same authors, techniques and
    repositories, restated; author lists, citations, statuses), imported and linked."""
    from bench.corpus import generate

    drawn = generate(30, seed=46, out=tmp_path / "drawn.nt")
    text_ = drawn.path.read_text(encoding="utf-8").replace("techkg.invalid/paper/", "techkg.invalid/paper/new-")
    triples = [t for t in ox.parse(text_.encode(), ox.RdfFormat.N_TRIPLES)]
    with store.transaction(Activity("a test's import")) as tx:
        tx.replace_graph(graph_iri("import/new-papers"), triples)
    papers = sorted({t.subject.value for t in triples if t.predicate == RDF.type and t.object == BIBO.Document})
    link_papers(store, papers)
    return papers


def test_an_import_of_new_papers_patches_their_rows_as_a_full_build_would_make_them(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    assert _kept(analysed_store, lambda store: _corpus_papers(store, tmp_path)) == []
    report = reports[-1]
    assert report.from_changes == ["links"]
    assert {"papers", "authorship", "citations", "paper_techniques", "authors"} <= set(report.patched_tables)
    assert "paper_categories" in report.rebuilt  # made whole, from the patched tables
    assert_as_a_full_build(analysed_store, db_of(Path(analysed_store.location)), tmp_path, "imported")


def test_a_technique_table_that_changes_for_a_renamed_author_is_followed_by_those_after_it(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    """The reader's own name for a technique's first author: ``techniques`` is made again and
    changed, so the tables that read it are made again too (``lineage_edges``, which comes out
    as it was, then stops the ripple: ``lineage_closure`` is left alone)."""
    from kg.graphs import MY_TECHNIQUES
    from kg.vocab import FOAF

    first = "SELECT ?p WHERE { ?t a tkg:Technique ; tkg:firstAuthor ?p . ?p a foaf:Person } ORDER BY ?p LIMIT 1"
    person = analysed_store.select(first).rows[0]["p"]

    def renamed(store: OxigraphStore) -> None:
        with store.transaction(Activity("a name of the reader's own")) as tx:
            tx.insert(MY_TECHNIQUES, [ox.Triple(person, FOAF.name, text("A. Renamed", None))])

    assert _kept(analysed_store, renamed) == []
    report = reports[-1]
    assert "techniques" in report.rebuilt
    assert "lineage_closure" not in report.rebuilt
    assert_as_a_full_build(analysed_store, db_of(Path(analysed_store.location)), tmp_path, "renamed")


def test_an_ingest_of_new_papers_patches_the_organisations_of_their_papers_too(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    """Papers of their own naming the authors the store has, as an arXiv ingest brings them:
    the paper-organisation pairs are patched for them, not made whole."""
    from bench.corpus import generate
    from bench.scale import new_papers

    own, _whole = new_papers(generate(30, seed=46, out=tmp_path / "drawn.nt").path.read_text(encoding="utf-8"))
    triples = list(ox.parse(own.encode(), ox.RdfFormat.N_TRIPLES))

    def ingest(store: OxigraphStore) -> None:
        with store.transaction(Activity("a test's ingest")) as tx:
            tx.replace_graph(graph_iri("import/ingested"), triples)
        link_papers(store, sorted({t.subject.value for t in triples if t.object == BIBO.Document}))

    assert _kept(analysed_store, ingest) == []
    assert {"paper_organisations", "organisation_coauthorship"} <= set(reports[-1].patched_tables)
    assert not {"paper_organisations", "organisation_coauthorship"} & set(reports[-1].rebuilt)
    # The authors' restated names patch the authors, so techniques (which shows its first author's
    # name) is made again, and comes out as it was: the lineage tables after it are left alone.
    assert not {"techniques", "lineage_edges", "lineage_closure", "technique_dimensions"} & \
        {*reports[-1].rebuilt, *reports[-1].patched_tables}
    assert_as_a_full_build(analysed_store, db_of(Path(analysed_store.location)), tmp_path, "ingested")


def test_an_authors_new_affiliation_patches_the_organisations_of_every_paper_of_theirs(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    from kg.analytics import connect
    from kg.vocab import FOAF, SCHEMA

    bench = graph_iri("bench")
    row = analysed_store.select(f"""SELECT ?person ?org (COUNT(DISTINCT ?paper) AS ?papers) WHERE {{
        GRAPH {bench} {{ ?person schema:affiliation ?org . ?list ?n ?person . ?paper bibo:authorList ?list }} }}
        GROUP BY ?person ?org HAVING (COUNT(DISTINCT ?paper) > 1) ORDER BY ?person LIMIT 1""").rows[0]
    person, org = row["person"], row["org"]
    other = ox.NamedNode("http://bench.techkg.invalid/org/moved-here")

    def moved(store: OxigraphStore) -> None:
        with store.transaction(Activity("an affiliation changed")) as tx:
            tx.delete(bench, [ox.Triple(person, SCHEMA.affiliation, org)])
            tx.insert(bench, [ox.Triple(person, SCHEMA.affiliation, other),
                              ox.Triple(other, RDF.type, FOAF.Organization)])

    db = db_of(Path(analysed_store.location))
    assert _kept(analysed_store, moved) == []
    assert "paper_organisations" in reports[-1].patched_tables
    assert "organisation_coauthorship" in reports[-1].rebuilt  # a row went: the pairs are counted again
    assert_as_a_full_build(analysed_store, db, tmp_path, "moved")
    con = connect(db, read_only=True)
    try:
        papers = con.execute("SELECT count(DISTINCT paper) FROM paper_organisations WHERE organisation = ?",
                             [other.value]).fetchall()
    finally:
        con.close()
    assert papers == [(int(row["papers"].value),)]


def test_a_change_to_a_node_a_paper_owns_patches_the_papers_rows(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    """An author list's member, or a citation node's context, changed alone: the rows of the
    paper that owns the node are made again."""
    from kg.vocab import CITO

    bench = graph_iri("bench")
    row = analysed_store.select(f"""SELECT ?paper ?list ?second ?cited WHERE {{ GRAPH {bench} {{
        ?paper bibo:authorList ?list . ?list rdf:_2 ?second . ?paper cito:cites ?cited }} }}
        ORDER BY ?paper LIMIT 1""").rows[0]
    other = analysed_store.select(f"""SELECT ?p WHERE {{ GRAPH {bench} {{ ?p a foaf:Person }}
        FILTER(?p != {row["second"]}) }} ORDER BY ?p LIMIT 1""").rows[0]["p"]
    node, contexts = ox.NamedNode(f"{row['paper'].value}/citation/0"), graph_iri("import/contexts")

    def first(store: OxigraphStore) -> None:
        with store.transaction(Activity("a citation node")) as tx:
            tx.insert(contexts, [ox.Triple(node, CITO.hasCitingEntity, row["paper"]),
                                 ox.Triple(node, CITO.hasCitedEntity, row["cited"]),
                                 ox.Triple(node, TKG.citationContext, ox.NamedNode(f"{node.value}/context/0"))])

    def list_changed(store: OxigraphStore) -> None:
        with store.transaction(Activity("the list changed")) as tx:
            tx.delete(bench, [ox.Triple(row["list"], RDF["_2"], row["second"])])
            tx.insert(bench, [ox.Triple(row["list"], RDF["_2"], other)])

    def node_changed(store: OxigraphStore) -> None:
        with store.transaction(Activity("the node changed")) as tx:
            tx.insert(contexts, [ox.Triple(node, TKG.citationContext, ox.NamedNode(f"{node.value}/context/1"))])

    db = db_of(Path(analysed_store.location))
    assert _kept(analysed_store, first) == []
    for write, table in ((list_changed, "authorship"), (node_changed, "citations")):
        assert _kept(analysed_store, write) == []
        assert table in reports[-1].patched_tables
        assert_as_a_full_build(analysed_store, db, tmp_path, table)
    from kg.analytics import connect

    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT contexts FROM citations WHERE citing = ? AND cited = ?",
                           [row["paper"].value, row["cited"].value]).fetchall() == [(2,)]
        assert con.execute("SELECT person FROM authorship WHERE paper = ? AND position = 2",
                           [row["paper"].value]).fetchall() == [(other.value,)]
    finally:
        con.close()


def test_triples_deleted_and_inserted_in_several_writes_end_as_the_last_one_left_them(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    links = graph_iri("links")
    existing = analysed_store.select(f"SELECT ?p ?t WHERE {{ GRAPH {links} {{ ?p tkg:usesTechnique ?t }} }} "
                                     "ORDER BY ?p ?t LIMIT 2").rows
    assert len(existing) == 2
    gone, back = (ox.Triple(r["p"], TKG.usesTechnique, r["t"]) for r in existing)
    added = ox.Triple(back.subject, TKG.extendsTechnique, back.object)

    def writes(store: OxigraphStore) -> None:
        with store.transaction(Activity("first")) as tx:
            tx.delete(links, [gone, back])
            tx.insert(links, [added, added])  # a triple twice
        with store.transaction(Activity("second")) as tx:
            tx.insert(links, [back, gone])  # one there already after this: inserted again below
            tx.delete(links, [gone])

    assert _kept(analysed_store, writes) == []
    assert reports[-1].from_changes == ["links"]
    def there(t: ox.Triple) -> bool:
        return analysed_store.ask(f"ASK {{ GRAPH {links} {{ {t.subject} {t.predicate} {t.object} }} }}")

    assert there(back) and there(added) and not there(gone)
    assert_as_a_full_build(analysed_store, db_of(Path(analysed_store.location)), tmp_path, "several")


def test_a_change_that_types_a_document_reads_the_graph_whole(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    """A document's other types are facts made from all its types in the graph: a change
    that types a document is not staged from itself."""
    links = graph_iri("links")
    paper = NEW[0]

    def writes(store: OxigraphStore) -> None:
        with store.transaction(Activity("typed")) as tx:
            tx.insert(links, [ox.Triple(paper, RDF.type, BIBO.Document),
                              ox.Triple(paper, RDF.type, ox.NamedNode("http://purl.org/spar/fabio/Preprint"))])

    assert _kept(analysed_store, writes) == []
    assert reports[-1].from_changes == []
    assert_as_a_full_build(analysed_store, db_of(Path(analysed_store.location)), tmp_path, "typed")


def test_a_graph_replaced_or_changed_by_a_raw_update_has_no_change_to_stage_from() -> None:
    store = OxigraphStore(None)
    watch = derived.watch(store, [])
    a, b = graph_iri("links"), graph_iri("reading")
    one = ox.Triple(NEW[0], TKG.usesTechnique, NEW[1])
    with store.transaction(Activity("inserts")) as tx:
        tx.insert(a, [one])
        tx.insert(b, [one])
    assert set(watch.changes.deltas) == {a.value, b.value}
    with store.transaction(Activity("a replacement")) as tx:
        tx.replace_graph(b, [one, ox.Triple(NEW[1], TKG.usesTechnique, NEW[2])])
    assert set(watch.changes.deltas) == {a.value}  # b was replaced: its change is not known
    with store.transaction(Activity("a raw update")) as tx:
        tx.update(f"INSERT DATA {{ GRAPH {a} {{ {NEW[2]} {TKG.usesTechnique} {NEW[0]} }} }}", touches=[a])
    assert watch.changes.deltas == {}
    watch.finish(lambda line: None)


def _dump(folder: Path, name: str, titles: dict[int, str], blank: bool) -> Path:
    lines = []
    for i, title in titles.items():
        paper = f"<https://doi.org/10.5555/techkg.refreshed-{i}>"
        lines += [f"{paper} <{RDF.type.value}> <{BIBO.Document.value}> .\n",
                  f'{paper} <{DCTERMS.title.value}> "{title}" .\n']
    if blank:  # a blank node kept across the replacement (its store id is on both sides)
        lines.append(f'_:venue <{TKG.venue.value}> "NeurIPS 2025" .\n')
    path = folder / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_a_graph_replaced_by_a_file_that_changes_a_little_is_staged_from_the_change_as_a_full_build_would(
        analysed_store: OxigraphStore, db_of: Any, reports: list[Any], tmp_path: Path) -> None:
    graph = graph_iri("import/refreshed")
    titles = {i: f"Gated DeltaNet at scale, part {i}" for i in range(6)}

    def load(path: Path) -> None:
        analysed_store.load_file(path, graph=graph, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                                 activity=Activity("a test's import"))

    assert _kept(analysed_store, lambda store: load(_dump(tmp_path, "first.nt", titles, True))) == []
    assert "import/refreshed" not in reports[-1].from_changes  # a first load: read whole
    titles[2] = "ZeRO for Gated DeltaNet"
    del titles[4]
    titles[9] = "A new paper on ZeRO"
    seen: list[derived.Changes | None] = []

    def replace(store: OxigraphStore) -> None:
        load(_dump(tmp_path, "second.nt", titles, False))
        seen.append(derived.written(store))

    assert _kept(analysed_store, replace) == []
    said = seen[0]
    assert said is not None  # (papers typed anew: the graph is read again whole, from its copy)
    changed = {(t.subject.value.rsplit("-", 1)[-1] if isinstance(t.subject, ox.NamedNode) else "blank",
                t.predicate.value.rsplit("/", 1)[-1], flag) for t, flag in said.deltas[graph.value].items()}
    assert changed == {("2", "title", False), ("2", "title", True), ("4", "title", False),
                       ("4", "22-rdf-syntax-ns#type", False), ("9", "title", True),
                       ("9", "22-rdf-syntax-ns#type", True), ("blank", "ns#venue", False)}
    titles[3] = "Muon for Gated DeltaNet"
    assert _kept(analysed_store, lambda store: load(_dump(tmp_path, "third.nt", titles, True))) == []
    assert "import/refreshed" in reports[-1].from_changes
    assert_as_a_full_build(analysed_store, db_of(Path(analysed_store.location)), tmp_path, "refreshed")
