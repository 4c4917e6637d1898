"""Links in the store: kg link's graph, what queries see, the reader's decisions that
re-linking never replaces, and linking only what a change concerns."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from kg.graphs import LINK_DECISIONS, LINKS, graph_iri
from kg.linking.apply import link_everything, link_papers
from kg.linking.decisions import decide, set_threshold, threshold
from kg.linking.listing import find_link, list_links
from kg.linking.refresh import Watch, candidates, relink_names
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore
from kg.vocab import BIBO, DCTERMS, RDF, SKOS, TKG, text

ZERO = "https://w3id.org/techkg/id/technique/zero"
GQA = "https://w3id.org/techkg/id/technique/gqa"
ZERO_OFFLOAD = "https://arxiv.org/abs/2101.06840"
ZERO_PAPER = "https://arxiv.org/abs/1910.02054"
MINE = graph_iri("import/mine")


def _direct(store: OxigraphStore, paper: str, technique: str) -> set[tuple[str, str]]:
    """(graph, relation) of each direct triple from ``paper`` to ``technique``."""
    rows = store.select("SELECT ?g ?p WHERE { GRAPH ?g { ?paper ?p ?t } FILTER(STRENDS(STR(?p), 'Technique')) }",
                        {"paper": ox.NamedNode(paper), "t": ox.NamedNode(technique)})
    return {(r["g"].value.rsplit("/", 1)[1], r["p"].value.rsplit("#", 1)[1]) for r in rows.rows}  # type: ignore[union-attr]


def _add_paper(store: OxigraphStore, iri: str, title: str, abstract: str = "") -> None:
    node = ox.NamedNode(iri)
    triples = [ox.Triple(node, RDF.type, BIBO.Document), ox.Triple(node, DCTERMS.title, text(title, None))]
    if abstract:
        triples.append(ox.Triple(node, DCTERMS.abstract, text(abstract, None)))
    with store.transaction(Activity("test: a paper")) as tx:
        tx.insert(MINE, triples)


def test_kg_link_ties_primary_papers_as_introduces_and_reading_list_papers_by_their_texts(built_store) -> None:
    report = link_everything(built_store)
    assert report.links and report.statuses["manual"] == 40  # the catalog's primary papers
    assert _direct(built_store, ZERO_PAPER, ZERO) == set()  # queries read the catalog's tkg:primaryPaper
    (primary,) = list_links(built_store, paper=ZERO_PAPER, technique=ZERO)
    assert (primary.link.relation, primary.link.status, primary.shown) == ("introduces", "manual", True)
    assert primary.link.evidence[0].field == "catalog"
    assert _direct(built_store, ZERO_OFFLOAD, ZERO) == {("links", "extendsTechnique")}
    (row,) = list_links(built_store, paper=ZERO_OFFLOAD, technique=ZERO)
    assert row.link.status == "auto" and row.shown and {e.field for e in row.link.evidence} >= {"title"}
    assert all(e.source.startswith("https://w3id.org/techkg/graph/") for e in row.link.evidence)


def test_what_kg_link_writes_conforms_to_the_shapes(built_store) -> None:
    from kg.validate import validate_store

    link_everything(built_store)
    decide(built_store, list_links(built_store, paper=ZERO_OFFLOAD, technique=ZERO)[0].link, "accepted")
    assert validate_store(built_store) == []


def test_queries_see_automatic_links_from_the_threshold_on(built_store) -> None:
    link_everything(built_store)
    assert threshold(built_store) == 0.5
    old, hidden, shown = set_threshold(built_store, 0.9)
    assert old == 0.5 and hidden and not shown
    assert _direct(built_store, ZERO_OFFLOAD, ZERO) == set()  # scores 0.85
    (row,) = list_links(built_store, paper=ZERO_OFFLOAD, technique=ZERO)
    assert not row.shown  # still listed, with its evidence
    link_everything(built_store)  # re-linking keeps to the reader's threshold
    assert _direct(built_store, ZERO_OFFLOAD, ZERO) == set()
    assert list_links(built_store, paper=ZERO_PAPER, technique=ZERO)[0].shown  # the catalog's, always


def test_a_rejected_link_never_comes_back(built_store) -> None:
    link_everything(built_store)
    row = find_link(built_store, list_links(built_store, paper=ZERO_OFFLOAD, technique=ZERO)[0].id[:10])
    assert row is not None
    decide(built_store, row.link, "rejected")
    assert _direct(built_store, ZERO_OFFLOAD, ZERO) == set()
    link_everything(built_store)
    link_papers(built_store, [ZERO_OFFLOAD])
    assert _direct(built_store, ZERO_OFFLOAD, ZERO) == set()
    (again,) = list_links(built_store, paper=ZERO_OFFLOAD, technique=ZERO)
    assert again.link.status == "rejected" and not again.shown


def test_an_accepted_link_stays_when_the_text_changes(built_store) -> None:
    paper = "https://example.org/paper/gqa-study"
    _add_paper(built_store, paper, "Decoding with grouped-query attention at scale")
    link_papers(built_store, [paper])
    (row,) = list_links(built_store, paper=paper, technique=GQA)
    decide(built_store, row.link, "accepted", relation="evaluates")
    with built_store.transaction(Activity("test: a new title")) as tx:
        tx.delete(MINE, [ox.Triple(ox.NamedNode(paper), DCTERMS.title,
                                   text("Decoding with grouped-query attention at scale", None))])
        tx.insert(MINE, [ox.Triple(ox.NamedNode(paper), DCTERMS.title, text("Decoding at scale", None))])
    link_everything(built_store)
    assert _direct(built_store, paper, GQA) == {("link-decisions", "evaluatesTechnique")}
    (kept,) = list_links(built_store, paper=paper, technique=GQA)
    assert kept.link.status == "accepted" and kept.link.evidence  # the evidence as it read when accepted


def test_a_link_added_by_hand_survives_kg_link_and_is_seen_once(built_store) -> None:
    from kg.linking.model import Link

    link_everything(built_store)
    decide(built_store, Link(ZERO_OFFLOAD, GQA, "mentions", 1.0), "manual", note="the paper's discussion")
    link_everything(built_store)
    assert _direct(built_store, ZERO_OFFLOAD, GQA) == {("link-decisions", "mentionsTechnique")}
    decide(built_store, list_links(built_store, paper=ZERO_OFFLOAD, technique=ZERO)[0].link, "accepted")
    assert _direct(built_store, ZERO_OFFLOAD, ZERO) == {("link-decisions", "extendsTechnique")}  # not twice
    assert built_store.ask(f"ASK {{ GRAPH {LINK_DECISIONS} {{ ?d tkg:linkStatus 'manual' }} }}")


def test_a_technique_the_reader_adds_in_a_graph_of_their_own_links_at_once(built_store) -> None:
    link_everything(built_store)
    ring = ox.NamedNode("https://example.org/technique/ring-attention")
    with built_store.transaction(Activity("test: my technique")) as tx:
        tx.insert(MINE, [ox.Triple(ring, RDF.type, TKG.Technique),
                         ox.Triple(ring, SKOS.prefLabel, text("Ring Attention")),
                         ox.Triple(ring, SKOS.notation, text("ring-attention", None))])
    report = relink_names(built_store, label="test")
    assert report is not None and not report.whole and report.papers >= 1
    rows = list_links(built_store, technique=ring.value)
    assert [r.paper_title for r in rows] == ["Ring Attention with Blockwise Transformers for Near-Infinite Context"]
    assert rows[0].link.relation in ("introduces", "uses") and rows[0].shown


def test_after_one_new_name_only_the_papers_that_can_match_it_are_linked_again(built_store) -> None:
    link_everything(built_store)
    assert candidates(built_store) == set()  # nothing changed
    before = built_store.triples(LINKS)
    with built_store.transaction(Activity("test: a name")) as tx:
        tx.insert(MINE, [ox.Triple(ox.NamedNode(ZERO), SKOS.altLabel, text("Sublinear Memory"))])
    found = candidates(built_store)
    assert found == {"https://arxiv.org/abs/1604.06174"}  # the one title with those words
    report = relink_names(built_store, label="test")
    assert report is not None and report.papers == 1 and not report.whole
    after = set(built_store.triples(LINKS))
    changed = {t.subject.value for t in after.symmetric_difference(before) if isinstance(t.subject, ox.NamedNode)}
    assert all("1604.06174" in s or "/link/" in s or s == ZERO for s in changed), changed


def test_an_import_that_names_a_technique_links_again_what_the_name_can_match_and_papers_alone_do_not(
        built_store) -> None:
    link_everything(built_store)
    sublinear = "https://arxiv.org/abs/1604.06174"  # the one title with the words of the new name
    paper = ox.NamedNode("https://example.org/p/ring")
    watch = Watch(built_store, [MINE], names=True)
    with built_store.transaction(Activity("test: a paper alone")) as tx:
        tx.insert(MINE, [ox.Triple(paper, RDF.type, BIBO.Document),
                         ox.Triple(paper, DCTERMS.title, text("Sublinear memory for ZeRO", None))])
    report = watch.relink(label="test")
    assert report.papers == 1 and report.changed == [paper.value]  # the new paper, not what names match
    watch = Watch(built_store, [MINE], names=True)
    with built_store.transaction(Activity("test: a name")) as tx:  # a name of the catalog's technique
        tx.insert(MINE, [ox.Triple(ox.NamedNode(ZERO), SKOS.altLabel, text("Sublinear Memory"))])
    report = watch.relink(label="test")
    assert sublinear in report.changed and paper.value in report.changed


def test_linking_some_papers_rewrites_only_their_links(built_store) -> None:
    link_everything(built_store)
    before = set(built_store.triples(LINKS))
    paper = "https://example.org/paper/ep"
    _add_paper(built_store, paper, "Scaling expert parallelism with DeepEP")
    report = link_papers(built_store, [paper])
    assert report.added and not report.removed
    after = set(built_store.triples(LINKS))
    assert before <= after and all(paper in str(t) or "/link/" in str(t.subject) for t in after - before)


def test_linking_unchanged_papers_again_writes_nothing_and_keeps_the_graphs_count(built_store) -> None:
    from tests.test_store import recorded_counts

    link_everything(built_store)
    papers = sorted({t.object.value for t in built_store.triples(LINKS) if t.predicate == TKG.linkedPaper})
    count = recorded_counts(built_store)[LINKS.value]
    report = link_papers(built_store, papers)  # every score as the store reads it back: no change at all
    assert report.added == 0 and report.removed == 0
    paper = "https://example.org/paper/ep"
    _add_paper(built_store, paper, "Scaling expert parallelism with DeepEP")
    report = link_papers(built_store, [paper])
    assert report.added and not report.removed
    assert recorded_counts(built_store)[LINKS.value] == count + report.added == built_store.count(LINKS)


def test_scores_are_written_as_the_store_keeps_them() -> None:
    from kg.linking.write import stored_decimal
    from kg.store.copies import canonical_triples

    decimal = ox.NamedNode("http://www.w3.org/2001/XMLSchema#decimal")
    for i in range(1001):
        written = ox.Triple(ox.NamedNode("https://example.org/l"), TKG.linkScore,
                            ox.Literal(stored_decimal(i / 1000), datatype=decimal))
        assert canonical_triples([written]) == f"{written} .\n".encode(), i


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_a_threshold_outside_0_to_1_is_refused(built_store, bad: float) -> None:
    from kg.errors import KGError

    with pytest.raises(KGError, match="between 0 and 1"):
        set_threshold(built_store, bad)
