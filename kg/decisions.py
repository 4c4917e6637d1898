"""The reader's verdicts on lineage suggestions, in the user-owned ``lineage-decisions`` graph.

``kg suggest accept ID [--as RELATION]`` and ``kg suggest reject ID`` each make one small
atomic update of that graph (never a replacement): the previous decision on the same pair,
if any, is deleted and the new one inserted, in one transaction recorded as a
``prov:Activity``. ``kg build`` does not touch the graph.

A decision is a ``tkg:LineageDecision`` (verdict, child and parent technique, proposed
and chosen relation, score, when, the evidence sentences as they read and the citations
behind them). An accepted one also adds the lineage edge itself, as the catalog writes
edges: the typed relation triple, ``prov:wasDerivedFrom``, and a qualified
``prov:Derivation`` with ``tkg:basis "accepted"``, attributed to the reader, pointing back
at the decision. So the edge shows in ``kg lineage``, the exports and the web, marked as
added by the reader, with its evidence. A rejected pair is never proposed again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pyoxigraph import Literal, NamedNode, Triple

from kg.errors import KGError
from kg.graphs import LINEAGE_DECISIONS
from kg.iris import skolem
from kg.store.base import Activity, GraphStore
from kg.vocab import ID, LINEAGE_RELATIONS, PROV, RDF, RDFS, TKG, XSD, datetime_literal, text

__all__ = ["READER", "Decision", "Proposal", "accept", "decision_iri", "decisions", "reject"]

#: The agent that accepted edges are attributed to: the person using TechKG.
READER = ID["agent/reader"]
EVIDENCE_KEPT = 5


class _Technique(Protocol):
    @property
    def iri(self) -> str: ...


class _Evidence(Protocol):
    @property
    def citation(self) -> str | None: ...

    def line(self) -> str: ...


class Proposal(Protocol):
    """What a decision records of the suggestion it decides (a :class:`kg.suggestions.Suggestion`):
    named by its shape, since kg.suggestions reads the decisions made before."""

    @property
    def id(self) -> str: ...
    @property
    def child(self) -> _Technique: ...
    @property
    def parent(self) -> _Technique: ...
    @property
    def relation(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def evidence(self) -> Sequence[_Evidence]: ...


@dataclass(frozen=True)
class Decision:
    suggestion: str
    verdict: str
    child: str
    parent: str
    relation: str | None
    at: str
    evidence: tuple[str, ...] = field(default_factory=tuple)
    #: True when the same decision was already recorded, and nothing was written.
    unchanged: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.suggestion, "verdict": self.verdict, "child": self.child, "parent": self.parent,
                "relation": self.relation, "at": self.at, "evidence": list(self.evidence), "unchanged": self.unchanged}


def decision_iri(suggestion_id: str) -> NamedNode:
    return ID["lineage-decision/" + suggestion_id]


def _derivation(child: str, parent: str) -> NamedNode:
    return skolem("accepted-derivation", child, parent)


def decisions(store: GraphStore) -> dict[tuple[str, str], Decision]:
    """Every decision, by (child IRI, parent IRI)."""
    rows = store.select(
        f"""SELECT ?d ?id ?verdict ?child ?parent ?rel ?at ?sentence WHERE {{ GRAPH {LINEAGE_DECISIONS} {{
              ?d a tkg:LineageDecision ; tkg:suggestion ?id ; tkg:verdict ?verdict ; tkg:childTechnique ?child ;
                 tkg:parentTechnique ?parent ; prov:generatedAtTime ?at .
              OPTIONAL {{ ?d tkg:chosenRelation ?rel }} OPTIONAL {{ ?d tkg:evidenceSentence ?sentence }} }} }}"""
    )
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows.records():
        key = (row["child"], row["parent"])
        item = found.setdefault(key, {"id": row["id"], "verdict": row["verdict"],
                                      "rel": row["rel"].rsplit("#", 1)[-1] if row["rel"] else None,
                                      "at": str(row["at"]), "sentences": {}})
        if row["sentence"] is not None:
            item["sentences"][row["sentence"]] = None
    return {key: Decision(v["id"], v["verdict"], key[0], key[1], v["rel"], v["at"], tuple(sorted(v["sentences"])))
            for key, v in found.items()}


def _forget(suggestion: Proposal) -> str:
    """The update that deletes an earlier decision on the same pair and any edge it added."""
    d = decision_iri(suggestion.id)
    q = _derivation(suggestion.child.iri, suggestion.parent.iri)
    child, parent = NamedNode(suggestion.child.iri), NamedNode(suggestion.parent.iri)
    g = LINEAGE_DECISIONS
    return (f"DELETE WHERE {{ GRAPH {g} {{ {d} ?p ?o }} }} ;\n"
            f"DELETE {{ GRAPH {g} {{ {child} ?rel {parent} }} }} WHERE {{ GRAPH {g} {{ {q} tkg:relation ?rel . "
            f"{child} ?rel {parent} }} }} ;\n"
            f"DELETE WHERE {{ GRAPH {g} {{ {child} prov:wasDerivedFrom {parent} }} }} ;\n"
            f"DELETE WHERE {{ GRAPH {g} {{ {child} prov:qualifiedDerivation {q} }} }} ;\n"
            f"DELETE WHERE {{ GRAPH {g} {{ {q} ?p ?o }} }}")


def _decision_triples(suggestion: Proposal, verdict: str, relation: str | None,
                      at: dt.datetime) -> list[Triple]:
    d = decision_iri(suggestion.id)
    t = [Triple(d, RDF.type, TKG.LineageDecision), Triple(d, TKG.suggestion, text(suggestion.id, None)),
         Triple(d, TKG.verdict, text(verdict, None)), Triple(d, TKG.childTechnique, NamedNode(suggestion.child.iri)),
         Triple(d, TKG.parentTechnique, NamedNode(suggestion.parent.iri)),
         Triple(d, TKG.proposedRelation, TKG[suggestion.relation]),
         Triple(d, TKG.score, Literal(f"{suggestion.score:.3f}", datatype=XSD.decimal)),
         Triple(d, PROV.generatedAtTime, datetime_literal(at)), Triple(d, PROV.wasAttributedTo, READER),
         Triple(READER, RDF.type, PROV.Agent), Triple(READER, RDFS.label, text("the reader"))]
    if relation:
        t.append(Triple(d, TKG.chosenRelation, TKG[relation]))
    for item in suggestion.evidence[:EVIDENCE_KEPT]:
        t.append(Triple(d, TKG.evidenceSentence, text(item.line(), None)))
        if item.citation:
            t.append(Triple(d, TKG.evidenceCitation, NamedNode(item.citation)))
    return t


def _check_relation(relation: str) -> str:
    wanted = relation.strip()
    by_fold = {r.casefold(): r for r in LINEAGE_RELATIONS}
    by_fold.update({"derives-from": "derivesFrom", "derived-from": "derivesFrom", "ports-to": "portsTo",
                    "builds-on": "buildsOn"})
    if wanted.casefold() not in by_fold:
        raise KGError(f"{relation!r} is not a lineage relation",
                      hint="Use one of: " + ", ".join(LINEAGE_RELATIONS) + ".")
    return by_fold[wanted.casefold()]


def accept(store: GraphStore, suggestion: Proposal, *, relation: str | None = None,
           at: dt.datetime | None = None) -> Decision:
    """Accept ``suggestion`` as a lineage edge (with ``relation``, default the proposed one).

    Idempotent: a suggestion accepted before stays as it was (nothing is written) unless
    ``relation`` names another relation; accepting it again without one never re-types it."""
    earlier = decisions(store).get((suggestion.child.iri, suggestion.parent.iri))
    if earlier is not None and earlier.verdict == "accepted":
        wanted = _check_relation(relation) if relation else earlier.relation
        if wanted == earlier.relation:
            return replace(earlier, unchanged=True)
    chosen = _check_relation(relation) if relation else suggestion.relation
    at = at or dt.datetime.now(dt.UTC)
    child, parent = NamedNode(suggestion.child.iri), NamedNode(suggestion.parent.iri)
    q = _derivation(child.value, parent.value)
    top = suggestion.evidence[0].line() if suggestion.evidence else "no sentence"
    edge = [Triple(child, TKG[chosen], parent), Triple(child, PROV.wasDerivedFrom, parent),
            Triple(child, PROV.qualifiedDerivation, q), Triple(q, RDF.type, PROV.Derivation),
            Triple(q, PROV.entity, parent), Triple(q, TKG.relation, TKG[chosen]),
            Triple(q, TKG.basis, text("accepted", None)), Triple(q, TKG.decision, decision_iri(suggestion.id)),
            Triple(q, PROV.wasAttributedTo, READER),
            Triple(q, RDFS.comment, text(f"Added by you from citation evidence (score {suggestion.score:.2f}): {top}"))]
    edge += [Triple(q, TKG.evidenceCitation, NamedNode(e.citation)) for e in suggestion.evidence[:EVIDENCE_KEPT]
             if e.citation]
    activity = Activity("kg suggest accept", stats={"added": 1})
    with store.transaction(activity) as tx:
        tx.update(_forget(suggestion), touches=[LINEAGE_DECISIONS])
        tx.insert(LINEAGE_DECISIONS, [*_decision_triples(suggestion, "accepted", chosen, at), *edge])
        tx.changes.decisions.add((child.value, parent.value))
    return Decision(suggestion.id, "accepted", child.value, parent.value, chosen,
                    datetime_literal(at).value, tuple(e.line() for e in suggestion.evidence[:EVIDENCE_KEPT]))


def reject(store: GraphStore, suggestion: Proposal, *, at: dt.datetime | None = None) -> Decision:
    """Reject ``suggestion``: it is never proposed again (an edge accepted earlier goes)."""
    at = at or dt.datetime.now(dt.UTC)
    activity = Activity("kg suggest reject", stats={"updated": 1})
    with store.transaction(activity) as tx:
        tx.update(_forget(suggestion), touches=[LINEAGE_DECISIONS])
        tx.insert(LINEAGE_DECISIONS, _decision_triples(suggestion, "rejected", None, at))
        tx.changes.decisions.add((suggestion.child.iri, suggestion.parent.iri))
    return Decision(suggestion.id, "rejected", suggestion.child.iri, suggestion.parent.iri, None,
                    datetime_literal(at).value, tuple(e.line() for e in suggestion.evidence[:EVIDENCE_KEPT]))
