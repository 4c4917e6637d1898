"""What the search index is made of, read out of the store as rows ``(graph, subject, key, object)``.

``key`` is the CURIE of the predicate (``dcterms:title``, ``skos:prefLabel``, ...; an English
or untagged ``skos:prefLabel`` keeps its key, a Chinese one becomes ``skos:prefLabel@zh``),
and ``object`` the text of the literal or the IRI. Only the predicates in :data:`PREDICATES`
are read, and of ``rdf:type`` only papers and techniques.

Two ways in, as the analytics build reads the store (see :mod:`kg.analytics.staging`):

- the whole store (:func:`all_facts`): every graph on its own; a graph that ``kg import rdf``
  loaded whole is read from its import copy by Arrow (:mod:`kg.analytics.copyrows`): at
  9M triples, decoding every term through the store costs tens of microseconds a row;
  any other graph by one SELECT per predicate;
- some subjects (:func:`facts_of`): their own rows and those of what they point at (the
  people who wrote them, their techniques and categories), walked from the subjects by
  SPARQL with the subjects bound, never a scan.

The notes (``?note tkg:noteOf ?paper ; rdf:value ?text``) come as rows of the paper with
the key ``note``, so that a note counts as the paper's own text, from whichever graph holds it;
where the reader edited or deleted a note (:mod:`kg.notes`), their text replaces the copy's
(:func:`kg.reading.prefer_reading`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import pyoxigraph as ox

from kg.graphs import ONTOLOGY, PROVENANCE
from kg.reading import prefer_reading
from kg.vocab import BIBO, DCTERMS, FOAF, RDF, SKOS, TKG

if TYPE_CHECKING:
    import pyarrow as pa

    from kg.store.base import GraphStore

__all__ = ["DOCUMENT", "LINKS", "PREDICATES", "TECHNIQUE", "Row", "all_facts", "facts_of", "schema", "to_table"]

Row = tuple[str, str, str, str]
DOCUMENT = BIBO.Document.value
TECHNIQUE = TKG.Technique.value
#: The paper → technique links (``tkg:linksTechnique`` and its sub-properties, and the
#: catalog's and the reading list's ``tkg:usesTechnique``).
LINKS = ("introducesTechnique", "extendsTechnique", "usesTechnique", "evaluatesTechnique", "mentionsTechnique",
         "linksTechnique")
#: The predicates read, by CURIE.
PREDICATES: dict[str, ox.NamedNode] = {
    "rdf:type": RDF.type,
    "dcterms:title": DCTERMS.title, "dcterms:alternative": DCTERMS.alternative, "dcterms:abstract": DCTERMS.abstract,
    "tkg:tldr": TKG.tldr, "dcterms:issued": DCTERMS.issued, "tkg:venue": TKG.venue, "tkg:arxivId": TKG.arxivId,
    "bibo:doi": BIBO.doi, "tkg:arxivPrimaryCategory": TKG.arxivPrimaryCategory,
    "tkg:readingStatus": TKG.readingStatus, "tkg:readingCategory": TKG.readingCategory,
    "tkg:whyItMatters": TKG.whyItMatters, "dcterms:creator": DCTERMS.creator, "foaf:name": FOAF.name,
    "tkg:citationCount": TKG.citationCount, "tkg:primaryPaper": TKG.primaryPaper,
    "skos:prefLabel": SKOS.prefLabel, "skos:altLabel": SKOS.altLabel, "skos:notation": SKOS.notation,
    "skos:definition": SKOS.definition, "skos:broader": SKOS.broader, "dcterms:date": DCTERMS.date,
    "tkg:follows": TKG.follows,
    **{f"tkg:{name}": TKG[name] for name in LINKS},
}
_KINDS = {DOCUMENT, TECHNIQUE}
#: The notes as the reader sees them: their own text where they edited one, none they deleted.
_NOTES = f"SELECT ?g ?s ?o WHERE {{ GRAPH ?g {{ ?n tkg:noteOf ?s ; rdf:value ?o }} {prefer_reading('?n', '?o')} }}"
Progress = Callable[[int, int], None]


@cache
def schema() -> pa.Schema:
    """The Arrow schema of the whole store's facts (:func:`all_facts`), made on first use:
    a write that patches a few documents (:func:`facts_of`) never imports Arrow."""
    import pyarrow as pa

    return pa.schema([("g", pa.dictionary(pa.int32(), pa.string())), ("s", pa.string()), ("k", pa.string()),
                      ("o", pa.string())])


def _key(curie: str, value: ox.Literal | ox.NamedNode) -> str:
    if curie == "skos:prefLabel" and isinstance(value, ox.Literal) and (value.language or "").startswith("zh"):
        return "skos:prefLabel@zh"
    return curie


def _rows(store: GraphStore, sparql: str, curie: str | None = None,
          bindings: Mapping[str, Sequence[ox.NamedNode]] | None = None) -> Iterator[Row]:
    """``(g, s, k, o)`` of a SELECT of ``?g ?s ?o`` (and ``?p`` unless ``curie`` names it)."""
    by_iri = {node.value: name for name, node in PREDICATES.items()}
    stream = store.stream(sparql, bindings)
    names = stream.variables
    for values in stream:
        row = dict(zip(names, values, strict=True))
        g, s, o = row.get("g"), row.get("s"), row.get("o")
        if not isinstance(g, ox.NamedNode) or not isinstance(s, ox.NamedNode):
            continue
        if not isinstance(o, ox.NamedNode | ox.Literal):
            continue
        name = curie
        if name is None:
            p = row.get("p")
            name = by_iri.get(p.value) if isinstance(p, ox.NamedNode) else None
            if name is None:
                continue
        if name == "rdf:type" and o.value not in _KINDS:
            continue
        yield g.value, s.value, _key(name, o), o.value


def _graphs(store: GraphStore) -> list[ox.NamedNode]:
    return [g for g in store.named_graphs() if g not in (ONTOLOGY, PROVENANCE)]


def all_facts(store: GraphStore, *, progress: Progress | None = None) -> Iterator[pa.RecordBatch]:
    """Every fact of every graph, as Arrow record batches of ``g, s, k, o``."""
    graphs = _graphs(store)
    for done, graph in enumerate(graphs, start=1):
        copy = store.import_copy(graph)
        batches = _copy_facts(graph, copy.path) if copy is not None else None
        if batches is not None:
            try:
                yield from batches
            except FileNotFoundError:  # a write deleted the copy as it was read: the store answers
                batches = None
        if batches is None:
            rows: list[Row] = []
            for curie, predicate in PREDICATES.items():
                rows += _rows(store, f"SELECT ?g ?s ?o WHERE {{ GRAPH {graph} {{ ?s {predicate} ?o }} "
                                     f"BIND({graph} AS ?g) }}", curie)
                if len(rows) >= 200_000:
                    yield to_table(rows)
                    rows = []
            yield to_table(rows)
        if progress:
            progress(done, len(graphs) + 1)
    yield to_table(list(_rows(store, _NOTES, "note")))
    if progress:
        progress(len(graphs) + 1, len(graphs) + 1)


def _copy_facts(graph: ox.NamedNode, path: Path) -> Iterator[pa.RecordBatch]:
    """The facts of an import copy (its N-Triples lines), parsed by Arrow a block at a time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from kg.analytics.copyrows import Lines, Predicates

    names = list(PREDICATES)
    lines = Lines(path, Predicates.of([f"<{PREDICATES[n].value}>" for n in names], names, [None] * len(names)))
    g = pa.scalar(graph.value, pa.string())
    kinds = pa.array(sorted(_KINDS), pa.string())
    for batch in lines.facts():
        keep = pc.invert(pc.starts_with(batch.column("s"), "_:"))
        if batch.num_rows:
            yield _batch(pc.filter(batch.column("s"), keep), pc.filter(batch.column("k"), keep),
                         pc.filter(batch.column("o"), keep), g)
        while lines.types:
            types = lines.types.pop()
            wanted = pc.is_in(types.column("o"), value_set=kinds)
            s, o = pc.filter(types.column("s"), wanted), pc.filter(types.column("o"), wanted)
            yield _batch(s, pa.array(["rdf:type"] * len(s), pa.string()), o, g)


def _batch(s: pa.Array, k: pa.Array, o: pa.Array, g: pa.Scalar) -> pa.RecordBatch:
    import pyarrow as pa

    graph = pa.DictionaryArray.from_arrays(pa.nulls(len(s), pa.int32()).fill_null(0), pa.array([g.as_py()]))
    return pa.record_batch({"g": graph, "s": s, "k": k, "o": o}, schema=schema())


def to_table(rows: Sequence[Row]) -> pa.RecordBatch:
    """Rows as an Arrow record batch of ``g, s, k, o`` (:func:`schema`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    arrays = {name: pa.array(list(values), pa.string()) for name, values in zip("gsko", columns, strict=True)}
    arrays["g"] = pc.dictionary_encode(arrays["g"]).cast(schema().field("g").type)
    return pa.record_batch(arrays, schema=schema())


def facts_of(store: GraphStore, subjects: Iterable[str]) -> Iterator[list[Row]]:
    """The facts of ``subjects`` (papers, techniques) and of what they point at: their
    techniques and those techniques' categories, the people who wrote them, their
    reading-list categories, the notes on them and who follows them. Each step walks from
    the nodes the step before found (bound, a chunk at a time), never a scan. A chunk at a
    time, as plain rows: a few documents' facts need no Arrow (:func:`to_table`)."""
    nodes = sorted({s for s in subjects if s.startswith(("http://", "https://", "urn:"))})
    wanted = ", ".join(f"<{node.value}>" for node in PREDICATES.values())
    link_keys = {f"tkg:{name}" for name in LINKS}
    people: set[str] = set()
    techniques: set[str] = set()
    labelled: set[str] = set()
    for chunk in _chunks(nodes):
        bound = {"s": chunk}
        # FILTER IN, not VALUES ?p: Oxigraph joins a VALUES of predicates after reading the
        # subjects' every triple in every graph, seconds where the filter takes milliseconds.
        rows = list(_rows(store, f"SELECT ?g ?s ?p ?o WHERE {{ GRAPH ?g {{ ?s ?p ?o FILTER(?p IN ({wanted})) }} }}",
                          bindings=bound))
        rows += _rows(store, _NOTES, "note", bindings=bound)
        rows += _rows(store, "SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s tkg:primaryPaper ?o } }", "tkg:primaryPaper",
                      bindings={"o": chunk})
        rows += _rows(store, "SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s tkg:follows ?o } }", "tkg:follows",
                      bindings={"o": chunk})
        for _g, subject, key, obj in rows:
            if key == "dcterms:creator":
                people.add(obj)
            elif key in link_keys:
                techniques.add(obj)
            elif key == "tkg:primaryPaper":
                techniques.add(subject)
            elif key in ("tkg:readingCategory", "skos:broader"):
                labelled.add(obj)
        yield rows
    # The techniques the documents link to: their ids, names, type and category.
    context = ", ".join(f"<{PREDICATES[c].value}>" for c in ("skos:notation", "skos:prefLabel", "skos:broader",
                                                              "rdf:type"))
    for chunk in _chunks(sorted(techniques - set(nodes))):
        rows = list(_rows(store, f"SELECT ?g ?s ?p ?o WHERE {{ GRAPH ?g {{ ?s ?p ?o FILTER(?p IN ({context})) }} }}",
                          bindings={"s": chunk}))
        labelled |= {o for _g, _s, k, o in rows if k == "skos:broader"}
        yield rows
    # The categories: their names and ids.
    names = ", ".join(f"<{PREDICATES[c].value}>" for c in ("skos:notation", "skos:prefLabel"))
    for chunk in _chunks(sorted(labelled)):
        yield list(_rows(
            store, f"SELECT ?g ?s ?p ?o WHERE {{ GRAPH ?g {{ ?s ?p ?o FILTER(?p IN ({names})) }} }}",
            bindings={"s": chunk}))
    for chunk in _chunks(sorted(people)):
        yield list(_rows(store, "SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s foaf:name ?o } }", "foaf:name",
                         bindings={"s": chunk}))


def _chunks(iris: Sequence[str], size: int = 500) -> Iterator[list[ox.NamedNode]]:
    for start in range(0, len(iris), size):
        yield [ox.NamedNode(i) for i in iris[start:start + size]]
