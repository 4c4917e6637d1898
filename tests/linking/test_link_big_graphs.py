"""A write to a big graph (kg ingest arxiv into an arXiv-scale graph) links again the papers
it changed, found from what the write said it inserted and deleted, without reading every
paper of the graph before and after (kg.linking.refresh.DIGEST_MOST)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg import derived
from kg.graphs import graph_iri
from kg.linking import refresh
from kg.linking.apply import link_everything
from kg.linking.listing import list_links
from kg.linking.refresh import Watch
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore
from kg.vocab import BIBO, DCTERMS, ID, RDF, TKG, text

BIG = graph_iri("import/big")
MUON = "https://w3id.org/techkg/id/technique/muon"
PAGED = "https://w3id.org/techkg/id/technique/paged-attention"


def _paper(i: int) -> ox.NamedNode:
    return ox.NamedNode(f"https://example.org/big/{i}")


@pytest.fixture
def big(built_store: OxigraphStore, monkeypatch: pytest.MonkeyPatch) -> Iterator[OxigraphStore]:
    """The built store with 40 papers in BIG, linked, BIG counted as big, and its writes watched."""
    triples = []
    for i in range(40):
        triples += [ox.Triple(_paper(i), RDF.type, BIBO.Document),
                    ox.Triple(_paper(i), DCTERMS.title, text(f"A study of optimisers, part {i}", None))]
    with built_store.transaction(Activity("test: papers")) as tx:
        tx.insert(BIG, triples)
    link_everything(built_store)
    monkeypatch.setattr(refresh, "DIGEST_MOST", 50)
    digested: list[list[str]] = []
    real = refresh._digests

    def counted(store: OxigraphStore, graphs: list[ox.NamedNode]) -> dict[str, str]:
        digested.append([g.value for g in graphs])
        return real(store, graphs)

    monkeypatch.setattr(refresh, "_digests", counted)
    watched = derived.watch(built_store, [])
    built_store.digested = digested  # type: ignore[attr-defined]
    yield built_store
    watched.finish(lambda line: None)


def _technique_of(store: OxigraphStore, paper: ox.NamedNode) -> set[str]:
    return {row.link.technique for row in list_links(store, paper=paper.value)}


def test_a_write_to_a_big_graph_links_again_only_the_papers_it_changed(big: OxigraphStore) -> None:
    watch = Watch(big, [BIG])
    note = ID["note/big-3"]
    with big.transaction(Activity("test: an ingest")) as tx:
        tx.delete(BIG, [ox.Triple(_paper(1), DCTERMS.title, text("A study of optimisers, part 1", None))])
        tx.insert(BIG, [ox.Triple(_paper(1), DCTERMS.title, text("Training LLMs with the Muon optimizer", None)),
                        ox.Triple(note, TKG.noteOf, _paper(3)),
                        ox.Triple(note, RDF.value, text("Served with PagedAttention", None)),
                        ox.Triple(_paper(40), RDF.type, BIBO.Document),
                        ox.Triple(_paper(40), DCTERMS.title, text("The Muon optimizer for LLM pretraining", None))])
    report = watch.relink(label="test")
    assert not report.whole and report.changed == sorted(p.value for p in (_paper(1), _paper(3), _paper(40)))
    assert big.digested == []  # type: ignore[attr-defined]  # the big graph was never read whole
    assert MUON in _technique_of(big, _paper(1)) and MUON in _technique_of(big, _paper(40))
    assert PAGED in _technique_of(big, _paper(3))
    # a later change of the note's text alone reaches its paper through the note
    watch = Watch(big, [BIG])
    with big.transaction(Activity("test: a note edited")) as tx:
        tx.delete(BIG, [ox.Triple(note, RDF.value, text("Served with PagedAttention", None))])
        tx.insert(BIG, [ox.Triple(note, RDF.value, text("Trained LLMs with the Muon optimizer", None))])
    assert watch.relink(label="test").changed == [_paper(3).value]
    assert MUON in _technique_of(big, _paper(3)) and PAGED not in _technique_of(big, _paper(3))


def _replace_with_paper_7_retitled(store: OxigraphStore, folder: Path) -> None:
    dump = folder / "big.nt"
    lines = []
    for i in range(40):
        title = "Training LLMs with the Muon optimizer" if i == 7 else f"A study of optimisers, part {i}"
        lines += [f"<{_paper(i).value}> <{RDF.type.value}> <{BIBO.Document.value}> .\n",
                  f'<{_paper(i).value}> <{DCTERMS.title.value}> "{title}" .\n']
    dump.write_text("".join(lines), encoding="utf-8")
    store.load_file(dump, graph=BIG, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False, activity=Activity("test: replaced"))


def test_a_big_graph_replaced_by_a_file_links_again_the_papers_the_replacement_changed(
        big: OxigraphStore, tmp_path: Path) -> None:
    watch = Watch(big, [BIG])
    _replace_with_paper_7_retitled(big, tmp_path)
    report = watch.relink(label="test")
    assert not report.whole and report.changed == [_paper(7).value]
    assert MUON in _technique_of(big, _paper(7))


def test_a_big_graph_replaced_past_what_a_change_holds_links_every_paper_again(
        big: OxigraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.store import bulk

    monkeypatch.setattr(bulk, "DELTA_LIMIT", 1)
    watch = Watch(big, [BIG])
    _replace_with_paper_7_retitled(big, tmp_path)
    report = watch.relink(label="test")
    assert report.whole and MUON in _technique_of(big, _paper(7))


def test_a_write_to_a_big_graph_that_no_one_watched_links_every_paper_again(big: OxigraphStore) -> None:
    derived.watch(big, []).finish(lambda line: None)  # (what the writes changed is not known)
    watch = Watch(big, [BIG])
    with big.transaction(Activity("test: unwatched")) as tx:
        tx.insert(BIG, [ox.Triple(_paper(2), DCTERMS.abstract, text("We train LLMs with the Muon optimizer.", None))])
    report = watch.relink(label="test")
    assert report.whole and MUON in _technique_of(big, _paper(2))
