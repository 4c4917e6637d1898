"""What the linker reads from the store: techniques and their names, papers' texts and
categories, primary papers.

Every read is over the union of the graphs (the reader's own techniques, their reading
list, Zotero and every import count), one query per kind of fact so that each is an index
scan; for a few papers they are bound (VALUES). A text held by several graphs (a title in
the catalog and in ``arxiv``) is read once, from the first graph in :data:`kg.graphs.SOURCES`
order.
"""

from __future__ import annotations

import marshal
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pyoxigraph import Literal, NamedNode

from kg import scratch
from kg.graphs import LINKS, PROVENANCE, SOURCES
from kg.linking.model import PaperText, TextField
from kg.linking.names import TechniqueLabels
from kg.vocab import BIBO, DCTERMS, RDF, TKG

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = ["LOTS", "TEXT_QUERIES", "each_paper", "paper_texts", "papers_with_words", "primary_papers",
           "technique_labels", "titles"]

_ORDER = {g.value: i for i, g in enumerate(SOURCES.values())}
_SKIP = {LINKS.value, PROVENANCE.value}
#: (field, the pattern that binds ?g ?p ?o): every text a paper is linked by.
TEXT_QUERIES: tuple[tuple[str, str], ...] = (
    ("title", "GRAPH ?g { ?p dcterms:title ?o }"),
    ("abstract", "GRAPH ?g { ?p dcterms:abstract ?o }"),
    ("tldr", "GRAPH ?g { ?p tkg:tldr ?o }"),
    ("reading-list-why", "GRAPH ?g { ?p tkg:whyItMatters ?o }"),
    ("zotero-tag", "GRAPH ?g { ?p tkg:tag ?o }"),
    ("zotero-note", "GRAPH ?g { ?n tkg:noteOf ?p ; rdf:value ?o }"),
    ("reading-list-category", "GRAPH ?g { ?p tkg:readingCategory ?c } ?c skos:prefLabel ?o"),
)
_CATEGORIES = "{ ?p tkg:arxivCategory ?o } UNION { ?p tkg:arxivPrimaryCategory ?o } UNION { ?p tkg:fieldOfStudy ?o }"
Progress = Callable[[str, int, int], None]


def technique_labels(store: GraphStore) -> list[TechniqueLabels]:
    """Every technique of the graph with its names: English name first, then its other
    names (aliases, names in other languages) and ids."""
    rows = store.select(
        """SELECT ?t ?p ?o WHERE { ?t a tkg:Technique ; ?p ?o
             FILTER(?p IN (skos:prefLabel, skos:altLabel, skos:notation)) }""")
    found: dict[str, dict[str, list[Literal]]] = defaultdict(lambda: defaultdict(list))
    for row in rows.rows:
        t, p, o = row["t"], row["p"], row["o"]
        if isinstance(t, NamedNode) and isinstance(p, NamedNode) and isinstance(o, Literal):
            found[t.value][p.value.rsplit("#", 1)[-1]].append(o)
    out = []
    for iri, props in sorted(found.items()):
        english = sorted(o.value for o in props["prefLabel"] if o.language in ("en", None))
        others = sorted(o.value for o in props["prefLabel"] if o.language not in ("en", None))
        notations = sorted(o.value for o in props["notation"])
        if not english and not others:
            continue
        name = english[0] if english else others[0]
        labels = list(dict.fromkeys([name, *english, *sorted(o.value for o in props["altLabel"]), *others]))
        out.append(TechniqueLabels(iri, notations[0] if notations else iri.rsplit("/", 1)[-1], name, tuple(labels),
                                   tuple(notations)))
    return out


def primary_papers(store: GraphStore) -> dict[str, dict[str, str]]:
    """Paper IRI → technique IRI → the graph that names the paper the technique's primary one."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for row in store.select("SELECT ?g ?t ?p WHERE { GRAPH ?g { ?t tkg:primaryPaper ?p } }").rows:
        g, t, p = row["g"], row["t"], row["p"]
        if isinstance(g, NamedNode) and isinstance(t, NamedNode) and isinstance(p, NamedNode):
            earlier = out[p.value].get(t.value)
            if earlier is None or _ORDER.get(g.value, 99) < _ORDER.get(earlier, 99):
                out[p.value][t.value] = g.value
    return dict(out)


def titles(store: GraphStore, papers: Sequence[str]) -> dict[str, str]:
    if not papers:
        return {}
    rows = store.select("SELECT ?p (MIN(?o) AS ?t) WHERE { ?p dcterms:title ?o } GROUP BY ?p",
                        {"p": [NamedNode(p) for p in papers]})
    return {r["p"].value: str(r["t"].value) for r in rows.rows  # type: ignore[union-attr]
            if r["p"] is not None and r["t"] is not None}


#: Facts an import copy's lines give directly (predicate → field), read without the store.
_COPY_FIELDS = {
    DCTERMS.title.value: "title", DCTERMS.abstract.value: "abstract", TKG.tldr.value: "tldr",
    TKG.whyItMatters.value: "reading-list-why", TKG.tag.value: "zotero-tag",
    TKG.arxivCategory.value: "category", TKG.arxivPrimaryCategory.value: "category",
    TKG.fieldOfStudy.value: "category",
}
_TYPE, _DOCUMENT = f"<{RDF.type.value}>", f"<{BIBO.Document.value}>"


class _Texts:
    """Papers' texts as they are read: keeps each text once, from the best graph."""

    def __init__(self) -> None:
        self.documents: set[str] = set()
        self.found: dict[str, dict[tuple[str, str], str]] = defaultdict(dict)
        self.categories: dict[str, set[str]] = defaultdict(set)

    def document(self, paper: str) -> None:
        self.documents.add(paper)

    def add(self, graph: str, paper: str, field: str, value: str) -> None:
        if field == "category":
            self.categories[paper].add(value)
            return
        value = value.strip()
        if not value or (field == "zotero-tag" and value.casefold().startswith("status/")):
            return  # a reading status kept as a tag is not a topic
        slot = self.found[paper]
        key = (field, " ".join(value.split()))
        earlier = slot.get(key)
        if earlier is None or _ORDER.get(graph, 99) < _ORDER.get(earlier, 99):
            slot[key] = graph

    def papers(self) -> dict[str, PaperText]:
        return {p: PaperText(p, [TextField(field, text, source) for (field, text), source in slot.items()],
                             frozenset(self.categories.get(p, ())))
                for p, slot in self.found.items() if p in self.documents}


class _Sink(Protocol):
    def document(self, paper: str) -> None: ...

    def add(self, graph: str, paper: str, field: str, value: str) -> None: ...


#: The lots a whole run reads the papers' texts back in (:func:`each_paper`): at 700k papers,
#: the texts of every paper held at once took 1 GB, a lot of them about 16 MB.
LOTS = 64
_A_DOCUMENT, _LISTED = "\x00document", "\x00listed"  # (rows of a lot that are not texts)
#: The rows held before they are written to their lots' files.
_ROWS = 50_000


class _Lots:
    """Papers' texts as they are read, spooled to :data:`LOTS` files by a hash of the paper,
    to be read back one lot at a time (:meth:`read`)."""

    def __init__(self, folder: Path) -> None:
        self.files = [open(folder / f"lot-{i}", "wb") for i in range(LOTS)]  # noqa: SIM115 (closed by close)
        self.pending: list[list[tuple[str, str, str, str]]] = [[] for _ in range(LOTS)]
        self.held = 0

    def _put(self, row: tuple[str, str, str, str]) -> None:
        self.pending[zlib.crc32(row[1].encode()) % LOTS].append(row)
        self.held += 1
        if self.held >= _ROWS:
            self._write()

    def _write(self) -> None:
        for rows, file in zip(self.pending, self.files, strict=True):
            if rows:
                marshal.dump(rows, file)
                rows.clear()
        self.held = 0

    def document(self, paper: str) -> None:
        self._put(("", paper, _A_DOCUMENT, ""))

    def listed(self, paper: str) -> None:
        self._put(("", paper, _LISTED, ""))

    def add(self, graph: str, paper: str, field: str, value: str) -> None:
        self._put((graph, paper, field, value))

    def close(self) -> None:
        self._write()
        for file in self.files:
            file.close()

    def read(self, lot: int) -> Iterator[tuple[str, PaperText | None]]:
        """The papers of ``lot`` in order, each with its texts (None: listed, but no document with a text)."""
        into, listed = _Texts(), set()
        with open(self.files[lot].name, "rb") as file:
            while True:
                try:
                    rows = marshal.load(file)
                except EOFError:
                    break
                for graph, paper, field, value in rows:
                    if field == _A_DOCUMENT:
                        into.document(paper)
                    elif field == _LISTED:
                        listed.add(paper)
                    else:
                        into.add(graph, paper, field, value)
        texts = into.papers()
        del into
        for paper in sorted(listed | set(texts)):
            yield paper, texts.get(paper)


def _from_copy(path: Any, graph: str, into: _Sink) -> None:
    """Read ``graph``'s facts from its import copy: the lines of the predicates wanted are
    picked out as bytes and parsed by pyoxigraph in blocks, never one term at a time."""
    import pyoxigraph as ox

    wanted = {f"<{p}>".encode() for p in _COPY_FIELDS}
    kind, document = _TYPE.encode(), _DOCUMENT.encode()
    block: list[bytes] = []

    def flush() -> None:
        for quad in ox.parse(b"".join(block), format=ox.RdfFormat.N_TRIPLES):
            if isinstance(quad.subject, NamedNode) and isinstance(quad.object, Literal):
                into.add(graph, quad.subject.value, _COPY_FIELDS[quad.predicate.value], quad.object.value)
        block.clear()

    with open(path, "rb") as lines:
        for line in lines:
            parts = line.split(b" ", 2)
            if len(parts) < 3:
                continue
            if parts[1] in wanted:
                block.append(line)
                if len(block) >= 50_000:
                    flush()
            elif parts[1] == kind and parts[2].startswith(document) and parts[0].startswith(b"<"):
                into.document(parts[0][1:-1].decode())
    if block:
        flush()


def _copies(store: GraphStore) -> dict[str, Any]:
    """Graph IRI → the import copy the store keeps of it (kg import rdf's graphs)."""
    from kg.graphs import is_import_graph

    out: dict[str, Any] = {}
    for graph in store.named_graphs():
        if is_import_graph(graph):
            copy = store.import_copy(graph)
            if copy is not None and copy.path.exists():
                out[graph.value] = copy.path
    return out


def paper_texts(store: GraphStore, papers: Sequence[str]) -> dict[str, PaperText]:
    """Paper IRI → its texts and categories, for each of ``papers`` that is a document (a
    subject counts as a paper when it is a ``bibo:Document`` somewhere)."""
    if not papers:
        return {}
    into = _Texts()
    _collect(store, into, {"p": [NamedNode(p) for p in papers]}, {})
    return into.papers()


def each_paper(store: GraphStore, also: Iterable[str] = (), *, progress: Progress | None = None
               ) -> Iterator[tuple[str, PaperText | None]]:
    """Every document of the graph with its texts and categories, and each paper of
    ``also`` (with None where it has no text), a lot of papers at a time (:data:`LOTS`):
    only one lot's texts are ever held. A graph ``kg import rdf`` loaded whole is read from
    its import copy (:mod:`kg.store.copies`), the rest from the store."""
    with scratch.folder("techkg-texts-") as folder:
        lots = _Lots(folder)
        try:
            for paper in also:
                lots.listed(paper)
            _collect(store, lots, None, _copies(store), progress)
        finally:
            lots.close()
        for lot in range(LOTS):
            if progress is not None:
                progress("linking", lot, LOTS)
            yield from lots.read(lot)
        if progress is not None:
            progress("linking", LOTS, LOTS)


def _collect(store: GraphStore, into: _Sink, bound: dict[str, Any] | None, copies: Mapping[str, Any],
             progress: Progress | None = None) -> None:
    """Every text and category of the papers ``bound`` (or of all: the graphs in ``copies``
    read from their import copies) into ``into``."""
    for graph, path in copies.items():
        _from_copy(path, graph, into)
    skip = _SKIP | set(copies)
    outside = ("FILTER(?g NOT IN (" + ", ".join(f"<{g}>" for g in sorted(copies)) + "))") if copies else ""
    # (bound: from the papers; Oxigraph starts ``?p a bibo:Document`` from the class once more
    # than about 1,000 papers are bound, and matches each document with each bound paper:
    # 2,000 papers at 700k took 34 s, against 0.15 s)
    documents = "GRAPH ?g { ?p a ?type } FILTER(?type = bibo:Document)" if bound else "GRAPH ?g { ?p a bibo:Document }"
    for row in store.stream(f"SELECT ?p WHERE {{ {documents} {outside} }}", bound):
        if isinstance(row[0], NamedNode):
            into.document(row[0].value)
    for step, (field, pattern) in enumerate(TEXT_QUERIES):
        if progress is not None:
            progress(field, step, len(TEXT_QUERIES))
        for g, p, o in store.stream(f"SELECT ?g ?p ?o WHERE {{ {pattern} {outside} }}", bound):
            if isinstance(p, NamedNode) and isinstance(o, Literal) and isinstance(g, NamedNode) \
                    and g.value not in skip:
                into.add(g.value, p.value, field, o.value)
    for g, p, o in store.stream(f"SELECT ?g ?p ?o WHERE {{ GRAPH ?g {{ {_CATEGORIES} }} {outside} }}", bound):
        if isinstance(p, NamedNode) and isinstance(o, Literal) and isinstance(g, NamedNode):
            into.add(g.value, p.value, "category", o.value)


def papers_with_words(store: GraphStore, words: Sequence[str]) -> set[str]:
    """The papers one of whose texts holds one of ``words`` (lower case), found by a
    case-blind substring test: the lines of an import copy as bytes, the rest in the store."""
    if not words:
        return set()
    from pyoxigraph import Literal as Lit

    found: set[str] = set()
    copies = _copies(store)
    wanted = {f"<{p}>".encode() for p, field in _COPY_FIELDS.items() if field != "category"}
    needles = [w.encode() for w in words]
    for path in copies.values():
        with open(path, "rb") as lines:
            for line in lines:
                parts = line.split(b" ", 2)
                if len(parts) == 3 and parts[1] in wanted and parts[0].startswith(b"<"):
                    text = parts[2].lower()
                    if any(n in text for n in needles):
                        found.add(parts[0][1:-1].decode())
    outside = ("FILTER(?g NOT IN (" + ", ".join(f"<{g}>" for g in sorted(copies)) + "))") if copies else ""
    texts = " UNION ".join("{ " + pattern + " }" for _field, pattern in TEXT_QUERIES)
    rows = store.stream(f"SELECT DISTINCT ?p WHERE {{ {texts} {outside} FILTER(CONTAINS(LCASE(STR(?o)), ?word)) }}",
                        {"word": [Lit(w) for w in words]})
    found |= {row[0].value for row in rows if isinstance(row[0], NamedNode)}
    return found
