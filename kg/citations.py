"""Citations in the graph: the CiTO vocabulary of the ``citations`` graph, and reads over it.

``kg ingest citations`` (``ingest/semanticscholar.py``) writes, in the ``citations`` graph:

- a plain ``cito:cites`` triple for every citation, from the citing paper to the cited one;
- one CiTO property per intent Semantic Scholar read in it (:data:`INTENT_PROPERTIES`):
  methodology → ``cito:usesMethodIn``, background → ``cito:obtainsBackgroundFrom``,
  result → ``cito:usesConclusionsFrom`` (the citing paper sets its results beside the
  cited one's; CiTO has no "compares with", and this is its closest term), and
  ``tkg:citesInfluentially`` when Semantic Scholar marks the citation influential;
- for a citation with contexts, intents or the influential flag, a ``cito:Citation`` node
  (:func:`citation_node`) with its citing and cited entity, each intent as
  ``cito:hasCitationCharacterization``, ``tkg:influential``, and each context sentence as a
  ``tkg:CitationContext`` (``rdf:value``, its ``tkg:intent`` values, ``tkg:position``).

This module only names those terms and reads them back; it knows nothing of the API.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyoxigraph import NamedNode

from kg.graphs import CITATIONS
from kg.iris import skolem
from kg.sparqltext import values_block
from kg.vocab import CITO, TKG

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = [
    "CITATION_PREDICATES",
    "INFLUENTIAL",
    "INTENTS",
    "INTENT_PROPERTIES",
    "CitationRecord",
    "Context",
    "citation_node",
    "citations_of",
    "context_node",
    "finished",
    "has_citations",
    "intent_of_property",
]

#: Semantic Scholar's citation intents, and the CiTO property each one adds.
INTENT_PROPERTIES: dict[str, NamedNode] = {
    "methodology": CITO.usesMethodIn,
    "background": CITO.obtainsBackgroundFrom,
    "result": CITO.usesConclusionsFrom,
}
INTENTS: tuple[str, ...] = tuple(INTENT_PROPERTIES)
#: The property of an influential citation (a sub-property of ``cito:cites``).
INFLUENTIAL = TKG.citesInfluentially
#: Every property that links a citing paper to a cited one in the ``citations`` graph.
CITATION_PREDICATES: frozenset[NamedNode] = frozenset({CITO.cites, INFLUENTIAL, *INTENT_PROPERTIES.values()})


def intent_of_property(prop: str) -> str | None:
    """``methodology`` for ``cito:usesMethodIn`` and so on; None for other properties."""
    return next((intent for intent, p in INTENT_PROPERTIES.items() if p.value == prop), None)


def citation_node(citing: NamedNode, cited: NamedNode) -> NamedNode:
    """The ``cito:Citation`` node of the citation from ``citing`` to ``cited`` (stable)."""
    return skolem("citation", citing.value, cited.value)


def context_node(citing: NamedNode, cited: NamedNode, position: int) -> NamedNode:
    return skolem("citation-context", citing.value, cited.value, str(position))


@dataclass(frozen=True)
class Context:
    """One sentence of the citing paper that makes the citation, with its intents."""

    text: str
    intents: tuple[str, ...] = ()


@dataclass
class CitationRecord:
    """A citation as the graph holds it."""

    citing: str
    cited: str
    intents: set[str] = field(default_factory=set)
    influential: bool = False
    contexts: list[Context] = field(default_factory=list)
    node: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"citing": self.citing, "cited": self.cited, "intents": sorted(self.intents),
                "influential": self.influential, "citation": self.node,
                "contexts": [{"text": c.text, "intents": list(c.intents)} for c in self.contexts]}


def has_citations(store: GraphStore) -> bool:
    """Whether ``kg ingest citations`` has written anything yet."""
    return store.ask(f"ASK {{ GRAPH {CITATIONS} {{ ?a <{CITO.cites.value}> ?b }} }}")


def citations_of(store: GraphStore, papers: list[NamedNode] | None = None, *,
                 cited: list[NamedNode] | None = None, of_techniques: bool = False) -> list[CitationRecord]:
    """The citations made by ``papers`` (or received by ``cited``, or both; or, with
    ``of_techniques``, made by the techniques' primary papers), with intents, the
    influential flag and the context sentences.

    Two plain queries, the links and the contexts, with the papers bound (VALUES): each
    row costs the store an index seek, so nothing is read that the answer does not need
    (an OPTIONAL around the contexts would make Oxigraph evaluate them for every citation
    of the graph, and a join with ``tkg:primaryPaper`` outside the citations graph makes it
    walk every citation node). With ``of_techniques`` the primary papers are read first."""
    if of_techniques:
        primary = [row["p"] for row in store.select("SELECT DISTINCT ?p WHERE { ?t tkg:primaryPaper ?p }").rows]
        if papers is not None:
            wanted = {p.value for p in papers}
            primary = [p for p in primary if isinstance(p, NamedNode) and p.value in wanted]
        papers = [p for p in primary if isinstance(p, NamedNode)]
    bindings: dict[str, Any] = {}
    for name, given in (("citing", papers), ("cited", cited)):
        if given is not None:
            if not given:
                return []
            bindings[name] = given
    g = CITATIONS
    # The VALUES go inside the GRAPH group: outside it, Oxigraph evaluates the group first.
    bound = values_block(bindings) if bindings else ""
    props = ", ".join(str(p) for p in sorted(CITATION_PREDICATES, key=str))
    out: dict[tuple[str, str], CitationRecord] = {}
    links = store.select(f"SELECT DISTINCT ?citing ?prop ?cited WHERE {{ GRAPH {g} {{ {bound} ?citing ?prop ?cited }} "
                         f"FILTER(?prop IN ({props})) }}")
    for row in links.records():
        record = out.setdefault((row["citing"], row["cited"]), CitationRecord(row["citing"], row["cited"]))
        if row["prop"] == INFLUENTIAL.value:
            record.influential = True
        intent = intent_of_property(row["prop"])
        if intent:
            record.intents.add(intent)
    texts: dict[tuple[str, str], dict[int, tuple[set[str], set[str]]]] = {}
    rows = store.select(
        f"""SELECT DISTINCT ?citing ?cited ?x ?text ?pos ?intent WHERE {{ GRAPH {g} {{ {bound}
              ?c cito:hasCitingEntity ?citing ; cito:hasCitedEntity ?cited ; tkg:citationContext ?x .
              ?x rdf:value ?text ; tkg:position ?pos . OPTIONAL {{ ?x tkg:intent ?intent }} }} }}""")
    for row in rows.records():
        key = (row["citing"], row["cited"])
        slot = texts.setdefault(key, {}).setdefault(int(row["pos"]), (set(), set()))
        slot[0].add(str(row["text"]))
        if row["intent"] is not None:
            slot[1].add(str(row["intent"]))
    for key, by_position in texts.items():
        if key in out:
            out[key].contexts = [Context(min(text), tuple(sorted(intents))) for _pos, (text, intents)
                                 in sorted(by_position.items())]
    return finished(out.values())


def finished(records: Iterable[CitationRecord]) -> list[CitationRecord]:
    """``records`` in the order :func:`citations_of` gives them (citing, then cited paper),
    each with its ``cito:Citation`` node where it has intents, influence or contexts. A
    position's sentence is the least of its texts, its intents those of every text there."""
    for record in records:
        if record.intents or record.influential or record.contexts:
            record.node = citation_node(NamedNode(record.citing), NamedNode(record.cited)).value
    return sorted(records, key=lambda r: (r.citing, r.cited))
