"""kg link reads every paper's texts a lot of papers at a time (kg.linking.reads.each_paper):
the same texts as read whole, and never every paper's texts held at once."""

from __future__ import annotations

import tracemalloc

import pyoxigraph as ox
import pytest

from kg.graphs import graph_iri
from kg.linking import reads
from kg.linking.apply import link_everything
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore
from kg.vocab import BIBO, DCTERMS, RDF, TKG, text

MINE = graph_iri("import/mine")


def _papers(store: OxigraphStore, count: int, words: int) -> int:
    """``count`` papers, each with a title and an abstract of ``words`` words; the bytes of their texts."""
    triples, size = [], 0
    for i in range(count):
        node = ox.NamedNode(f"https://example.org/paper/{i}")
        title, abstract = f"Grouped-query attention at scale, part {i}", " ".join(f"w{i}x{j}" for j in range(words))
        triples += [ox.Triple(node, RDF.type, BIBO.Document), ox.Triple(node, DCTERMS.title, text(title, None)),
                    ox.Triple(node, DCTERMS.abstract, text(abstract, None)),
                    ox.Triple(node, TKG.arxivCategory, text("cs.LG", None))]
        size += len(title) + len(abstract)
    with store.transaction(Activity("test: papers")) as tx:
        tx.insert(MINE, triples)
    return size


def test_every_paper_comes_once_with_the_texts_it_has_when_read_whole(built_store, kg_cli, tmp_path) -> None:
    _papers(built_store, 300, 5)
    dump = tmp_path / "more.nt"  # a graph with an import copy, read from the copy
    dump.write_text("".join(
        f'<https://example.org/copied/{i}> <{RDF.type.value}> <{BIBO.Document.value}> .\n'
        f'<https://example.org/copied/{i}> <{DCTERMS.title.value}> "Muon on \\"big\\" models {i}" .\n'
        for i in range(50)), encoding="utf-8")
    built_store.load_file(dump, graph=graph_iri("import/more"), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                          activity=Activity("test: an import"))
    assert built_store.import_copy(graph_iri("import/more")) is not None
    documents = sorted({r[0].value for r in built_store.stream("SELECT ?p WHERE { ?p a bibo:Document }")})
    whole = reads.paper_texts(built_store, documents)
    lonely = "https://example.org/cited-but-unknown"
    found = list(reads.each_paper(built_store, [lonely, documents[0]]))
    papers = [paper for paper, _text in found]
    assert len(papers) == len(set(papers)) == len(whole) + 1
    assert dict(found)[lonely] is None
    texts = {paper: t for paper, t in found if t is not None}
    assert texts.keys() == whole.keys()
    for paper, t in texts.items():
        assert sorted(map(tuple, (vars(f).values() for f in t.fields))) == \
               sorted(map(tuple, (vars(f).values() for f in whole[paper].fields)))
        assert t.categories == whole[paper].categories
    assert texts["https://example.org/copied/7"].fields[0].text == 'Muon on "big" models 7'
    assert texts["https://example.org/paper/3"].categories == {"cs.LG"}


def test_linking_every_paper_never_holds_every_papers_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    store = OxigraphStore(None)
    size = _papers(store, 2000, 400)  # about 5 MB of abstracts
    monkeypatch.setattr(reads, "_ROWS", 100)
    tracemalloc.start()
    try:
        seen = sum(1 for _paper, t in reads.each_paper(store) if t is not None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seen == 2000
    assert peak < size / 4, f"{peak:,} bytes held at once for {size:,} bytes of texts"


def test_kg_link_counts_every_paper_it_linked(built_store) -> None:
    _papers(built_store, 120, 3)
    report = link_everything(built_store)
    recorded = built_store.select(
        "SELECT ?n WHERE { GRAPH ?g { ?a a prov:Activity ; rdfs:label 'kg link' ; tkg:papers ?n } }").rows
    assert report.papers >= 120 and report.links
    assert [int(r["n"].value) for r in recorded] == [report.papers]  # type: ignore[union-attr]
