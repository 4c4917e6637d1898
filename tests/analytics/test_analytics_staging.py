"""Staging: the facts read out of the store are exactly the solutions of each key's SPARQL
pattern (kg.analytics.staging.KEYS), whichever way the store is read: one query per
graph, or one per key for a big graph; types made in SQL from the graph's rdf:type
triples; terms kept whole through the TSV files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

G = "https://w3id.org/techkg/graph/import/awkward"


def _triples() -> list[Any]:
    from pyoxigraph import BlankNode, Literal, NamedNode, Triple

    from kg.vocab import BIBO, DCTERMS, FABIO, FOAF, RDF, SKOS, TKG, XSD

    paper, other = NamedNode("https://example.org/paper/é-1"), NamedNode("https://example.org/p2")
    anon, person, seq = BlankNode("doc1"), NamedNode("https://example.org/person/1"), BlankNode("seq")
    odd = NamedNode("https://example.org/class/Odd")
    return [
        # documents with several types, one of them a class no table reads; a blank-node document
        Triple(paper, RDF.type, BIBO.Document),
        Triple(paper, RDF.type, FABIO.Preprint),
        Triple(paper, RDF.type, odd),
        Triple(anon, RDF.type, BIBO.Document),
        # a class the tables read on a non-document, a type no key wants, a literal "type"
        Triple(person, RDF.type, FOAF.Person),
        Triple(other, RDF.type, odd),
        Triple(other, RDF.type, Literal(BIBO.Document.value)),
        # awkward text: spaces, quotes, escapes, a tab, a newline, non-ASCII, languages
        Triple(paper, DCTERMS.title, Literal('Spaces, "quotes", back\\slash, a\ttab,\na line; 中文 ✓ 😀')),
        Triple(anon, DCTERMS.title, Literal("Ein Titel", language="de-CH")),
        Triple(paper, SKOS.prefLabel, Literal("名称", language="zh-Hans")),
        Triple(paper, SKOS.prefLabel, Literal("Name", language="en")),
        Triple(paper, SKOS.prefLabel, Literal("plain")),
        Triple(paper, DCTERMS.issued, Literal("2024-05-01", datatype=XSD.date)),
        Triple(paper, TKG.citationCount, Literal("42", datatype=XSD.integer)),
        Triple(paper, TKG.maxAbsError, Literal("1e-06", datatype=XSD.double)),
        Triple(paper, TKG.tolerance, Literal("0.25", datatype=XSD.decimal)),
        Triple(paper, TKG.passed, Literal("true", datatype=XSD.boolean)),
        Triple(paper, DCTERMS.creator, person),
        Triple(person, FOAF.name, Literal("Ada \\u00E9 Lovelace")),
        # an ordered author list held by a blank node
        Triple(paper, BIBO.authorList, seq),
        Triple(seq, RDF["_1"], person),
        Triple(seq, RDF["_2"], other),
        Triple(seq, RDF["_12"], anon),
        # not a list position staging reads; a label that is no literal (LANG() fails on it);
        # a control character N-Triples escapes and TSV does not
        Triple(seq, RDF["_2001"], other),
        Triple(other, SKOS.prefLabel, person),
        Triple(other, SKOS.prefLabel, Literal("標籤", language="ZH")),
        Triple(other, DCTERMS.title, Literal("bell \x07, del \x7f, unit \x01 end")),
    ]


def _term(term: Any) -> tuple[str | None, str | None]:
    """A term as staging keeps it: its value, and its kind (None for an IRI, '_' for a
    blank node, '' for a plain string, '@lang' or the datatype IRI for other literals)."""
    from pyoxigraph import BlankNode, Literal

    if term is None:
        return None, None
    if isinstance(term, BlankNode):
        return f"_:{term.value}", "_"
    if isinstance(term, Literal):
        if term.language:
            return term.value, "@" + term.language
        string = term.datatype.value == "http://www.w3.org/2001/XMLSchema#string"
        return term.value, "" if string else term.datatype.value
    return term.value, None


def _expected(store: Any) -> set[tuple[Any, ...]]:
    """Each key's pattern asked of the store on its own (the member key per position)."""
    from kg.analytics.staging import KEYS, MAX_AUTHOR_POSITION

    out = set()
    for key in KEYS.values():
        members = " ".join(f"(rdf:_{n} {n})" for n in range(1, MAX_AUTHOR_POSITION + 1))
        pattern = key.pattern or f"VALUES (?m ?n) {{ {members} }} ?s ?m ?o"
        for row in store.select(f"SELECT ?s ?o ?n WHERE {{ GRAPH <{G}> {{ {pattern} }} }}"):
            s, o, n = row["s"], row["o"], row["n"]
            value, kind = _term(o)
            out.add((_term(s)[0], key.name, value, int(n.value) if n is not None else None, kind))
    return out


@dataclass(frozen=True)
class _Copy:
    path: Path
    triples: int
    blank_ids: str


def _copy_of(store: Any, folder: Path, blank_ids: str) -> _Copy:
    """An import copy of G as the store keeps one: its N-Triples lines in Oxigraph's form;
    with the file's own blank-node labels (here: the store's with a prefix) and some lines
    repeated, or with the store's labels."""
    import pyoxigraph as ox

    lines = [f"{t.subject} {t.predicate} {t.object} .\n" for t in store.triples(ox.NamedNode(G))]
    triples = len(lines)
    if blank_ids == "file":
        lines = [re.sub(r"(^|(?<= ))_:", "_:f", line) for line in lines]
        lines += lines[:5]
    path = folder / f"copy-{blank_ids}.nt"
    path.write_text("".join(lines), encoding="utf-8")
    return _Copy(path, triples, blank_ids)


@pytest.mark.parametrize(
    ("size", "copy"),
    [(None, None), (10**9, None), (None, "store"), (None, "file")],
    ids=["one-query", "query-per-key", "import-copy", "import-copy-with-file-labels"],
)
def test_staged_facts_are_exactly_each_keys_solutions(tmp_path: Path, size: int | None, copy: str | None) -> None:
    import duckdb
    from pyoxigraph import NamedNode

    from kg.analytics.materialize import _SETUP, session
    from kg.analytics.staging import stage
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(tmp_path / "store")
    try:
        with store.transaction(Activity("test")) as tx:
            tx.replace_graph(NamedNode(G), _triples())
        expected = _expected(store)
        if copy == "file":  # the copy's labels, with the graph's prefix
            expected = {tuple(re.sub(r"^_:", "_:kg7.f", v) if isinstance(v, str) else v for v in row)
                        for row in expected}
        copies = {G: _copy_of(store, tmp_path, copy)} if copy else None
        con = duckdb.connect()
        session(con)
        con.execute(_SETUP)
        folder = tmp_path / "tsv"
        folder.mkdir()
        added = stage(store, con, [NamedNode(G)], folder, ids={G: 7}, sizes={G: size}, copies=copies)
        got = con.execute("SELECT g, s, CAST(k AS VARCHAR), o, n, d FROM staging.facts").fetchall()
    finally:
        store.close()
    assert added == len(got) and {r[0] for r in got} == {7}
    assert len(got) == len(expected), "a fact was staged twice"
    assert {r[1:] for r in got} == expected
    # the type keys are there (the test would pass vacuously without them)
    kinds = {r[2] for r in got}
    assert {"a:bibo:Document", "a:fabio:Preprint", "a:foaf:Person", "types", "rdf:_n"} <= kinds
