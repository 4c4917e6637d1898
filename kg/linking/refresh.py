"""Linking what a write changed, and only that.

- :class:`Watch`: made before a write (an ingest, an import, a reading-list change) over
  the graphs it writes, it reads what the linker reads of them (each paper's texts and
  categories, its citations' sentences and flags) as one digest per paper; after the
  write, :meth:`Watch.relink` links again the papers whose digest changed. A graph that was
  empty before and now holds many papers is linked whole, through the bulk loader.
  A graph of more than :data:`DIGEST_MOST` triples is not read whole before and after
  (at 700k papers, 26 s each time): the papers the write changed in it are found from
  what the write said it inserted and deleted there (:attr:`kg.derived.Changes.deltas`);
  where it did not say (a graph replaced whole), every paper is linked again.
- :func:`relink_names`: after the techniques or their names changed (``kg build``, an
  import, the reader's own techniques), the papers that *can* match a name that came or
  went are linked again: those whose texts contain the words of a new name (found by a
  case-blind substring test in the store, not by linking every paper), and those linked to
  a technique through a name that went. A change of the context rules re-links all.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode

from kg import derived
from kg.graphs import LINKS
from kg.linking.apply import LinkReport, link_everything, link_papers, linked_names, rules_digest
from kg.linking.names import fold
from kg.linking.reads import TEXT_QUERIES, papers_with_words, technique_labels
from kg.vocab import BIBO, CITO, DCTERMS, RDF, SKOS, TKG

if TYPE_CHECKING:
    from pyoxigraph import Triple

    from kg.store.base import GraphStore

__all__ = ["DIGEST_MOST", "WHOLE_ABOVE", "Watch", "candidates", "relink_names"]

#: Above this many changed papers, linking everything through the bulk loader is faster
#: than a transaction per change.
WHOLE_ABOVE = 20_000
#: A watched graph of more triples than this is not digested (see the module's docstring).
DIGEST_MOST = 200_000
#: What a changed triple says of the papers whose linking it can change: the subject's own
#: (a text, a category, a citation flag, being a document), the object's (a note, a
#: citation or a technique naming its paper), or those of the node it describes (a note's
#: text, a category's name, a citation's sentence: see :func:`_papers_of`).
_OF_SUBJECT = frozenset({DCTERMS.title, DCTERMS.abstract, TKG.tldr, TKG.whyItMatters, TKG.tag, TKG.readingCategory,
                         TKG.arxivCategory, TKG.arxivPrimaryCategory, TKG.fieldOfStudy, CITO.usesMethodIn,
                         TKG.citesInfluentially})
_OF_OBJECT = frozenset({TKG.noteOf, CITO.hasCitingEntity, TKG.primaryPaper})
_OF_NODE = frozenset({RDF.value, SKOS.prefLabel, TKG.citationContext})
_CITATION_FACTS = (
    "GRAPH ?g { ?p cito:usesMethodIn ?o }",
    "GRAPH ?g { ?p tkg:citesInfluentially ?o }",
    "GRAPH ?g { ?c cito:hasCitingEntity ?p ; tkg:citationContext ?x . ?x rdf:value ?o }",
    "GRAPH ?g { ?p tkg:arxivCategory ?o }",
    "GRAPH ?g { ?p tkg:fieldOfStudy ?o }",
    "GRAPH ?g { ?t tkg:primaryPaper ?p BIND(?t AS ?o) }",
)


def _digests(store: GraphStore, graphs: Sequence[NamedNode]) -> dict[str, str]:
    """Paper IRI → a digest of what the linker reads about it in ``graphs``."""
    parts: dict[str, list[str]] = defaultdict(list)
    patterns = [pattern for _field, pattern in TEXT_QUERIES] + list(_CITATION_FACTS)
    for graph in graphs:
        for n, pattern in enumerate(patterns):
            for p, o in store.stream(f"SELECT ?p ?o WHERE {{ {pattern} }}", {"g": graph}):
                if isinstance(p, NamedNode) and o is not None:
                    parts[p.value].append(f"{graph.value}\x1f{n}\x1f{o}")
    return {p: hashlib.sha1("\n".join(sorted(items)).encode()).hexdigest() for p, items in parts.items()}


class Watch:
    """What a write to ``graphs`` may change of the links (see the module's docstring)."""

    def __init__(self, store: GraphStore, graphs: Sequence[NamedNode], *, names: bool = False) -> None:
        """``names``: a change of techniques or their names in ``graphs`` relinks what it concerns too."""
        self.store = store
        self.graphs = list(graphs)
        self.names = names
        self.big = {g.value for g in self.graphs if _more_than(store, g, DIGEST_MOST)}
        self.before = {g.value: _digests(store, [g]) for g in self.graphs if g.value not in self.big}
        written = derived.written(store) if self.big else None  # (what writes before this one said)
        self.said = {g: dict(written.deltas.get(g) or {}) for g in self.big} if written is not None else {}
        self.named_before = names and _names_techniques(store, self.graphs)

    def changed(self) -> list[str] | None:
        """The papers the write changed; None when that is not known (every paper may have)."""
        found: set[str] = set()
        big = set(self.big)
        for graph in self.graphs:
            if graph.value in big:
                continue
            if _more_than(self.store, graph, DIGEST_MOST):  # big now: not read whole after the write either
                big.add(graph.value)
                continue
            before, after = self.before[graph.value], _digests(self.store, [graph])
            found |= {p for p in set(after) | set(before) if after.get(p) != before.get(p)}
        if big:
            written = derived.written(self.store)
            if written is None or not written.graphs_known:
                return None
            for name in big & written.graphs:
                delta = written.deltas.get(name)
                if delta is None:
                    return None  # replaced whole, or changed past what a delta holds
                said = self.said.get(name, {})
                found |= _papers_of(self.store, [t for t, inserted in delta.items() if said.get(t) is not inserted])
        return sorted(found)

    def relink(self, *, label: str) -> LinkReport:
        """Link the papers the write changed (after a change of techniques too, with ``names``:
        where the graphs held or hold a technique or a name of one)."""
        changed = self.changed()
        if changed is None:
            return link_everything(self.store, label=label)
        names = self.names
        if names and (self.named_before or _names_techniques(self.store, self.graphs)):
            found = candidates(self.store)
            if found is None:
                return link_everything(self.store, label=label)
            changed = sorted(set(changed) | found)
        if len(changed) > WHOLE_ABOVE or (changed and not _linked_before(self.store)):
            return link_everything(self.store, label=label)
        return link_papers(self.store, changed, label=label, names_too=names)


def _more_than(store: GraphStore, graph: NamedNode, most: int) -> bool:
    rows = store.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT * WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }} "
                        f"LIMIT {most + 1} }}").rows
    value = rows[0]["n"] if rows else None
    return isinstance(value, Literal) and int(value.value) > most


def _papers_of(store: GraphStore, delta: Iterable[Triple]) -> set[str]:
    """The papers whose linking the triples of ``delta`` (inserted or deleted) can change."""
    found: set[str] = set()
    nodes: set[NamedNode] = set()
    for triple in delta:
        s, p, o = triple.subject, triple.predicate, triple.object
        if p in _OF_SUBJECT or (p == RDF.type and o == BIBO.Document):
            if isinstance(s, NamedNode):
                found.add(s.value)
        elif p in _OF_OBJECT:
            if isinstance(o, NamedNode):
                found.add(o.value)
        elif p in _OF_NODE and isinstance(s, NamedNode):
            nodes.add(s)
    # (a node the write deleted whole named its paper in the delta too: above; a blank node,
    # such as a citation's sentence, changes with the triple that ties it to its citation)
    if nodes:
        rows = store.stream("""SELECT DISTINCT ?p WHERE {
            { ?n tkg:noteOf ?p } UNION { ?p tkg:readingCategory ?n } UNION { ?n cito:hasCitingEntity ?p }
            UNION { ?c tkg:citationContext ?n ; cito:hasCitingEntity ?p } }""", {"n": sorted(nodes, key=str)})
        found |= {row[0].value for row in rows if isinstance(row[0], NamedNode)}
    return found


def _names_techniques(store: GraphStore, graphs: Sequence[NamedNode]) -> bool:
    """Whether ``graphs`` state a technique, or a name of one (papers and their authors alone
    change no name: at 700k papers, finding what a change of names concerns takes 1 s)."""
    return any(store.ask("""ASK { { GRAPH ?g { ?t a tkg:Technique } } UNION {
                               GRAPH ?g { ?t skos:prefLabel|skos:altLabel|skos:notation ?o } ?t a tkg:Technique } }""",
                         {"g": graph}) for graph in graphs)


def _linked_before(store: GraphStore) -> bool:
    return store.ask(f"ASK {{ GRAPH {LINKS} {{ ?s ?p ?o }} }}")


def _recorded(store: GraphStore) -> tuple[dict[str, set[str]], str | None]:
    names: dict[str, set[str]] = {}
    for t, value in store.stream(f"SELECT ?t ?v WHERE {{ GRAPH {LINKS} {{ ?t tkg:linkNames ?v }} }}"):
        if isinstance(t, NamedNode) and isinstance(value, Literal):
            names[t.value] = set(json.loads(value.value))
    rules = store.select(f"SELECT ?v WHERE {{ GRAPH {LINKS} {{ ?s tkg:linkRules ?v }} }}").rows
    value = rules[0]["v"] if rules else None
    return names, value.value if isinstance(value, Literal) else None


def _words(name: str) -> str:
    """The longest word of a name, as a case-blind substring test looks for it."""
    words = fold(name.split(":", 1)[1]).split()
    return max(words, key=len) if words else ""


def candidates(store: GraphStore) -> set[str] | None:
    """The papers a change of names since the last linking can concern (see the module's
    docstring); None when everything must be linked again (never linked, or new rules)."""
    recorded, rules = _recorded(store)
    if rules is None or rules != rules_digest():
        return None
    now = linked_names(technique_labels(store))
    added: set[str] = set()
    gone: set[str] = set()
    for technique in set(now) | set(recorded):
        new, old = set(now.get(technique, [])), recorded.get(technique, set())
        added |= new - old
        if old - new:
            gone.add(technique)
    found = papers_with_words(store, sorted({w for w in (_words(n) for n in added) if w}))
    if gone:
        rows = store.stream(f"SELECT DISTINCT ?p WHERE {{ GRAPH {LINKS} {{ ?l tkg:linkedPaper ?p ; "
                            f"tkg:linkedTechnique ?t }} }}", {"t": [NamedNode(t) for t in sorted(gone)]})
        found |= {row[0].value for row in rows if isinstance(row[0], NamedNode)}
    return found


def relink_names(store: GraphStore, *, label: str, found: set[str] | None = None) -> LinkReport | None:
    """Link again what a change of techniques or names can concern (``found``: the
    candidates, when the caller has them); None when nothing changed."""
    found = candidates(store) if found is None else found
    if found is None:
        return link_everything(store, label=label)
    recorded, _rules = _recorded(store)
    now = linked_names(technique_labels(store))
    if not found and {t: set(v) for t, v in now.items()} == recorded:
        return None
    return link_papers(store, sorted(found), label=label, names_too=True)
