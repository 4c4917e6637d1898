"""What the ``my-techniques`` graph holds, as plain data, and the triples it is written as.

The graph is small (a reader's few techniques), so every change reads it whole into a
:class:`Mine`, changes that, and writes it back whole (:func:`mine_triples`): one atomic
replacement of a user-owned graph, which keeps a snapshot first, so that ``kg undo`` takes
any change back, and which writes nothing when nothing changed.

The triples use the catalog's own vocabulary (``kg/catalog.py``): a technique of the
reader's own is a ``tkg:Technique`` and ``skos:Concept`` in the technique scheme, with
``skos:prefLabel``/``skos:altLabel``/``skos:notation``, its category as ``skos:broader``,
``dcterms:date``, ``tkg:primaryPaper``, ``tkg:repository``, the comparison dimensions,
typed lineage edges with ``prov:wasDerivedFrom`` and a qualified ``prov:Derivation``, and
``tkg:addedBy tkg:reader``. The reader's facts on a catalog technique are the same
properties on the catalog's node, with ``tkg:amendedBy tkg:reader``; each value of theirs
where a technique has one value (a date, a dimension) is marked (:func:`reader_value`), and
in every view it replaces the catalog's (:mod:`kg.owntech.overrides`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from kg.catalog import DIMENSIONS, SCHEME, category_triples, derivation_triples, repository_triples
from kg.iris import category_iri, parse_arxiv_id, repo_iri, skolem, technique_iri
from kg.vocab import (
    BIBO,
    DCTERMS,
    LINEAGE_RELATIONS,
    PROV,
    RDF,
    RDFS,
    SKOS,
    TKG,
    XSD,
    boolean,
    date_literal,
    text,
)

__all__ = [
    "BASIS",
    "READER",
    "VALUES",
    "Category",
    "Entry",
    "Mine",
    "Paper",
    "Value",
    "arxiv_of",
    "mine_from_triples",
    "reader_value",
    "mine_triples",
]

#: The reader, as the ontology names them: who adds techniques and follows them.
READER = TKG.reader
#: The basis of a lineage edge the reader added with kg technique add/edit.
BASIS = "added"


@dataclass(frozen=True)
class Value:
    """A single-valued text fact of a technique that the reader may give: a comparison
    dimension (STAR included), the headline, the summary or the note on its date."""

    key: str
    predicate: NamedNode
    label: str


#: Every text value, by its TOML key: the comparison page's dimensions in page order, then
#: the headline, the summary and the date note.
VALUES: dict[str, Value] = {
    **{key: Value(key, prop, label) for key, prop, label in DIMENSIONS},
    "headline": Value("headline", TKG.headlineResult, "Headline result"),
    "summary": Value("summary", SKOS.definition, "Summary"),
    "date_note": Value("date_note", TKG.dateNote, "Date note"),
}
_BY_PREDICATE = {v.predicate.value: v for v in VALUES.values()}


@dataclass
class Category:
    """A category the reader made (``--new-category``)."""

    id: str
    label: str
    definition: str | None = None
    position: int = 100

    @property
    def iri(self) -> NamedNode:
        return category_iri(self.id)


@dataclass
class Paper:
    """A paper the reader named that the graph did not hold: a stub until ``kg ingest
    arxiv`` (or ``citations``) fills in its metadata."""

    iri: str
    arxiv: str | None = None
    doi: str | None = None
    title: str | None = None


@dataclass
class Entry:
    """The reader's word on one technique: the whole of a technique of their own
    (``own``), or their facts on a catalog technique."""

    id: str
    own: bool
    name: str | None = None
    aliases: list[str] = field(default_factory=list)
    category: str | None = None
    date: str | None = None
    paper: str | None = None
    repository: str | None = None
    values: dict[str, str] = field(default_factory=dict)
    #: (parent technique IRI, relation), in the order given.
    parents: list[tuple[str, str]] = field(default_factory=list)
    created: str | None = None
    #: Names and aliases given with --force although another technique answers to them.
    shared: list[str] = field(default_factory=list)

    @property
    def iri(self) -> NamedNode:
        return technique_iri(self.id)

    def copy(self) -> Entry:
        return replace(self, aliases=list(self.aliases), values=dict(self.values), parents=list(self.parents),
                       shared=list(self.shared))

    def facts(self) -> list[str]:
        """What the reader said, in words (for lists and reports)."""
        out = [f"alias {a}" for a in self.aliases]
        out += [label for label, given in (("date", self.date), ("paper", self.paper),
                                           ("repository", self.repository)) if given]
        out += [VALUES[k].label.lower() for k in VALUES if k in self.values]
        out += [f"parent ({relation})" for _p, relation in self.parents]
        return out


@dataclass
class Mine:
    """The whole ``my-techniques`` graph."""

    categories: dict[str, Category] = field(default_factory=dict)
    entries: dict[str, Entry] = field(default_factory=dict)
    papers: dict[str, Paper] = field(default_factory=dict)

    def copy(self) -> Mine:
        return Mine(dict(self.categories), {k: e.copy() for k, e in self.entries.items()}, dict(self.papers))

    def own(self) -> list[Entry]:
        return [e for e in self.entries.values() if e.own]


# -- triples ---------------------------------------------------------------------------


def _derivation(child: str, relation: str, parent: str) -> NamedNode:
    return skolem("my-derivation", child, relation, parent)


def reader_value(technique: str, predicate: NamedNode) -> NamedNode:
    """The node that marks the reader's value of ``predicate`` on a catalog technique:
    ``<technique> tkg:readerValue [ tkg:property predicate ; rdf:value V ]``."""
    return skolem("reader-value", technique, predicate.value)


def _entry_triples(entry: Entry) -> Iterator[Triple]:
    node = entry.iri
    if entry.own:
        yield Triple(node, RDF.type, TKG.Technique)
        yield Triple(node, RDF.type, SKOS.Concept)
        yield Triple(node, SKOS.inScheme, SCHEME)
        yield Triple(node, SKOS.notation, text(entry.id, None))
        yield Triple(node, TKG.onComparisonPage, boolean(False))
        yield Triple(node, TKG.addedBy, READER)
        if entry.name:
            yield Triple(node, SKOS.prefLabel, text(entry.name))
        if entry.category:
            yield Triple(node, SKOS.broader, category_iri(entry.category))
        if entry.created:
            yield Triple(node, DCTERMS.created, Literal(entry.created, datatype=XSD.dateTime))
    overrides: list[tuple[NamedNode, Literal | NamedNode]] = []
    for alias in entry.aliases:
        yield Triple(node, SKOS.altLabel, text(alias))
    if entry.date:
        yield Triple(node, DCTERMS.date, date_literal(entry.date))
        overrides.append((DCTERMS.date, date_literal(entry.date)))
    if entry.paper:
        yield Triple(node, TKG.primaryPaper, NamedNode(entry.paper))
        overrides.append((TKG.primaryPaper, NamedNode(entry.paper)))
    if entry.repository:
        yield from repository_triples(node, entry.repository)
        overrides.append((TKG.repository, repo_iri(entry.repository)))
    for key, value in VALUES.items():
        if entry.values.get(key):
            yield Triple(node, value.predicate, text(entry.values[key]))
            overrides.append((value.predicate, text(entry.values[key])))
    if "headline" in entry.values:
        # A headline of the reader's own holds as they wrote it: no conditions (the
        # catalog's, if any, were about the catalog's figure).
        yield Triple(node, TKG.headlineConditional, boolean(False))
        overrides.append((TKG.headlineConditional, boolean(False)))
    if not entry.own:
        yield Triple(node, TKG.amendedBy, READER)
        for prop, given in overrides:
            marker = reader_value(entry.id, prop)
            yield Triple(node, TKG.readerValue, marker)
            yield Triple(marker, TKG.property, prop)
            yield Triple(marker, RDF.value, given)
    for label in entry.shared:
        yield Triple(node, TKG.sharesLabel, text(label, None))
    for parent, relation in entry.parents:
        d = _derivation(entry.id, relation, parent)
        yield from derivation_triples(node, NamedNode(parent), relation, d, BASIS)
        yield Triple(d, PROV.wasAttributedTo, READER)


def mine_triples(mine: Mine) -> list[Triple]:
    """Every triple of the ``my-techniques`` graph for ``mine``, in a stable order."""
    out: list[Triple] = []
    for cat in sorted(mine.categories.values(), key=lambda c: c.id):
        out += category_triples(cat.id, cat.label, cat.position, cat.definition)
    for paper in sorted(mine.papers.values(), key=lambda p: p.iri):
        node = NamedNode(paper.iri)
        out.append(Triple(node, RDF.type, BIBO.Document))
        if paper.title:
            out.append(Triple(node, DCTERMS.title, text(paper.title, None)))
        else:
            out.append(Triple(node, TKG.needsMetadata, boolean(True)))
        if paper.arxiv:
            out.append(Triple(node, TKG.arxivId, text(paper.arxiv, None)))
        if paper.doi:
            out.append(Triple(node, BIBO.doi, text(paper.doi, None)))
    for entry in sorted(mine.entries.values(), key=lambda e: e.id):
        out += _entry_triples(entry)
    if mine.entries or mine.categories:
        out += [Triple(READER, RDF.type, PROV.Agent), Triple(READER, RDFS.label, text("the reader"))]
    return list(dict.fromkeys(out))


# -- reading it back -------------------------------------------------------------------


def _value(term: object) -> str:
    return str(term.value) if isinstance(term, Literal | NamedNode | BlankNode) else str(term)


def _fields(facts: list[Triple], predicates: dict[str, NamedNode]) -> dict[str, str]:
    """The values ``facts`` give to each of ``predicates`` (by a name for it; the last one wins)."""
    names = {predicate.value: name for name, predicate in predicates.items()}
    return {names[t.predicate.value]: _value(t.object) for t in facts if t.predicate.value in names}


def mine_from_triples(triples: Iterable[Triple]) -> Mine:
    """The :class:`Mine` that ``triples`` (the ``my-techniques`` graph) hold."""
    by_subject: dict[str, list[Triple]] = {}
    for t in triples:
        by_subject.setdefault(_value(t.subject), []).append(t)
    mine = Mine()
    technique_base = technique_iri("").value
    category_base = category_iri("").value
    for subject, facts in by_subject.items():
        types = {_value(t.object) for t in facts if t.predicate == RDF.type}
        if TKG.TechniqueCategory.value in types and subject.startswith(category_base):
            got = _fields(facts, {"label": SKOS.prefLabel, "definition": SKOS.definition, "position": TKG.position})
            cat = Category(subject.removeprefix(category_base), got.get("label", ""), got.get("definition"))
            if "position" in got:
                cat.position = int(got["position"])
            mine.categories[cat.id] = cat
        elif BIBO.Document.value in types:
            got = _fields(facts, {"title": DCTERMS.title, "arxiv": TKG.arxivId, "doi": BIBO.doi})
            mine.papers[subject] = Paper(subject, arxiv=got.get("arxiv"), doi=got.get("doi"), title=got.get("title"))
        elif subject.startswith(technique_base):
            mine.entries[subject.removeprefix(technique_base)] = _entry(subject.removeprefix(technique_base), facts,
                                                                        by_subject)
    return mine


def _entry(ident: str, facts: list[Triple], by_subject: dict[str, list[Triple]]) -> Entry:
    entry = Entry(ident, own=any(t.predicate == TKG.addedBy for t in facts))
    category_base = category_iri("").value
    for t in facts:
        p, o = t.predicate, t.object
        if p == SKOS.prefLabel:
            entry.name = _value(o)
        elif p == SKOS.altLabel:
            entry.aliases.append(_value(o))
        elif p == SKOS.broader:
            entry.category = _value(o).removeprefix(category_base)
        elif p == DCTERMS.date:
            entry.date = _value(o)
        elif p == DCTERMS.created:
            entry.created = _value(o)
        elif p == TKG.primaryPaper:
            entry.paper = _value(o)
        elif p == TKG.repository:
            entry.repository = _value(o)
        elif p.value in _BY_PREDICATE:
            entry.values[_BY_PREDICATE[p.value].key] = _value(o)
        elif p == TKG.sharesLabel:
            entry.shared.append(_value(o))
        elif p == PROV.qualifiedDerivation:
            d = by_subject.get(_value(o), [])
            parent = next((_value(x.object) for x in d if x.predicate == PROV.entity), None)
            relation = next((_value(x.object).rsplit("#", 1)[-1] for x in d if x.predicate == TKG.relation), None)
            if parent and relation in LINEAGE_RELATIONS:
                entry.parents.append((parent, relation))
    entry.aliases.sort(key=str.casefold)
    entry.shared.sort(key=str.casefold)
    entry.parents.sort()
    return entry


def arxiv_of(paper: str) -> str | None:
    """The arXiv id of a paper IRI (None for any other IRI)."""
    if not paper.startswith("https://arxiv.org/abs/"):
        return None
    try:
        return parse_arxiv_id(paper).id
    except ValueError:
        return None
