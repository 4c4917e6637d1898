"""The reader's verdicts on links and their threshold, in the user-owned ``link-decisions`` graph.

``kg links accept ID``, ``kg links reject ID`` and ``kg links add PAPER TECHNIQUE --as
RELATION`` each make one small update (never a replacement): the earlier verdict on the
same pair, if any, goes; the new one is a ``tkg:TechniqueLink`` node of its own
(``id/link-decision/<hex>``) with status ``accepted``, ``rejected`` or ``manual``, the
relation, the score and a copy of the evidence as it read when decided, pointing at the
automatic link it decides (``tkg:decidedLink``), attributed to the reader. An accepted or
added link also gets its direct triple here (``paper tkg:usesTechnique technique``), and the
automatic one in ``links`` loses its own, in the same transaction: queries see the link
once, from the reader's graph, which ``kg build`` and ``kg link`` never replace. So a
rejected link never comes back, and an accepted or added one stays whatever the paper's
text says later.

The threshold (:func:`threshold`, :func:`set_threshold`): automatic links scoring at least
it are seen by queries; 0.5 until the reader sets another.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode, Triple

from kg.errors import KGError
from kg.graphs import LINK_DECISIONS, LINKS
from kg.linking.model import RELATION_PROPERTIES, RELATIONS, Evidence, Link, link_id, links_about, relation_of_property
from kg.linking.write import direct_triple
from kg.vocab import ID, PROV, RDF, RDFS, TKG, XSD, datetime_literal, text

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = ["DEFAULT_THRESHOLD", "READER", "Decision", "check_relation", "decide", "decision_iri", "decisions",
           "set_threshold", "threshold"]

DEFAULT_THRESHOLD = 0.5
READER = ID["agent/reader"]
SETTINGS = ID["link-settings"]


def decision_iri(ident: str) -> NamedNode:
    return ID["link-decision/" + ident.removeprefix("ln-")]


@dataclass
class Decision:
    """A verdict as the graph keeps it."""

    paper: str
    technique: str
    status: str
    relation: str
    score: float
    at: str
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def id(self) -> str:
        return link_id(self.paper, self.technique)

    def as_link(self) -> Link:
        return Link(self.paper, self.technique, self.relation, self.score, self.status, list(self.evidence))

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "paper": self.paper, "technique": self.technique, "status": self.status,
                "relation": self.relation, "score": self.score, "at": self.at,
                "evidence": [e.as_dict() for e in self.evidence]}


def check_relation(relation: str) -> str:
    """``relation`` as one of the five (``uses``, ``usesTechnique`` and ``tkg:usesTechnique``
    all read as uses); a KGError that lists them otherwise."""
    from difflib import get_close_matches

    wanted = relation.strip().removeprefix("tkg:").removesuffix("Technique").casefold()
    if wanted in RELATIONS:
        return wanted
    close = get_close_matches(wanted, RELATIONS, n=2, cutoff=0.5)
    raise KGError(f"{relation!r} is not a link relation",
                  hint=("Did you mean " + " or ".join(close) + "? " if close else "") + "Use one of: "
                  + ", ".join(RELATIONS) + ".")


def threshold(store: GraphStore) -> float:
    rows = store.select(f"SELECT ?v WHERE {{ GRAPH {LINK_DECISIONS} {{ {SETTINGS} tkg:linkThreshold ?v }} }}").rows
    value = rows[0]["v"] if rows else None
    try:
        return float(value.value) if isinstance(value, Literal) else DEFAULT_THRESHOLD
    except ValueError:
        return DEFAULT_THRESHOLD


def decisions(store: GraphStore, *, papers: list[str] | None = None,
              techniques: list[str] | None = None) -> dict[tuple[str, str], Decision]:
    """Every verdict (or those about ``papers`` / ``techniques``), by (paper, technique)."""
    bound = links_about(papers, techniques)
    rows = store.select(
        f"""SELECT ?paper ?technique ?status ?rel ?score ?at ?f ?text ?src WHERE {{ GRAPH {LINK_DECISIONS} {{
              ?d a tkg:TechniqueLink ; tkg:linkedPaper ?paper ; tkg:linkedTechnique ?technique ;
                 tkg:linkStatus ?status ; tkg:linkRelation ?rel ; tkg:linkScore ?score ; prov:generatedAtTime ?at .
              OPTIONAL {{ ?d tkg:linkEvidence ?e . ?e tkg:evidenceField ?f ; tkg:evidenceText ?text ;
                                                    tkg:evidenceSource ?src }} }} }}""", bound or None)
    out: dict[tuple[str, str], Decision] = {}
    for row in rows.records():
        key = (row["paper"], row["technique"])
        found = out.get(key)
        if found is None:
            found = out[key] = Decision(key[0], key[1], str(row["status"]),
                                        relation_of_property(row["rel"]) or "mentions", float(row["score"]),
                                        str(row["at"]))
        if row["f"] is not None:
            item = Evidence(str(row["f"]), str(row["text"]), row["src"], found.relation, found.score)
            if item not in found.evidence:
                found.evidence.append(item)
    return out


def decided_pairs(store: GraphStore) -> dict[tuple[str, str], str]:
    """(paper, technique) → the reader's status on it, for every verdict."""
    rows = store.select(f"""SELECT ?paper ?technique ?status WHERE {{ GRAPH {LINK_DECISIONS} {{
        ?d a tkg:TechniqueLink ; tkg:linkedPaper ?paper ; tkg:linkedTechnique ?technique ;
           tkg:linkStatus ?status }} }}""")
    return {(r["paper"], r["technique"]): str(r["status"]) for r in rows.records()}


def _forget(store: GraphStore, ident: str) -> list[Triple]:
    """The triples of the earlier verdict on link ``ident`` (its node, evidence and triple)."""
    d = decision_iri(ident)
    out: list[Triple] = []
    rows = store.select(f"""SELECT ?s ?p ?o WHERE {{ GRAPH {LINK_DECISIONS} {{
        {{ {d} ?p ?o BIND({d} AS ?s) }} UNION {{ {d} tkg:linkEvidence ?s . ?s ?p ?o }} }} }}""")
    paper = technique = None
    for row in rows.rows:
        s, p, o = row["s"], row["p"], row["o"]
        if isinstance(s, NamedNode) and isinstance(p, NamedNode) and o is not None:
            out.append(Triple(s, p, o))
            if s == d and p == TKG.linkedPaper:
                paper = o
            if s == d and p == TKG.linkedTechnique:
                technique = o
    if isinstance(paper, NamedNode) and isinstance(technique, NamedNode):
        for prop in RELATION_PROPERTIES.values():
            candidate = Triple(paper, prop, technique)
            if store.ask(f"ASK {{ GRAPH {LINK_DECISIONS} {{ {paper} {prop} {technique} }} }}"):
                out.append(candidate)
    return out


def _links_direct(store: GraphStore, paper: NamedNode, technique: NamedNode) -> list[Triple]:
    return [Triple(paper, prop, technique) for prop in RELATION_PROPERTIES.values()
            if store.ask(f"ASK {{ GRAPH {LINKS} {{ {paper} {prop} {technique} }} }}")]


def decide(store: GraphStore, link: Link, status: str, *, relation: str | None = None, note: str | None = None,
           at: dt.datetime | None = None) -> Decision:
    """Record the reader's ``status`` (accepted, rejected or manual) on ``link`` (an automatic
    one, or a new pair for manual), with ``relation`` instead of the link's own where given."""
    if status not in ("accepted", "rejected", "manual"):
        raise ValueError(status)
    at = at or dt.datetime.now(dt.UTC)
    chosen = check_relation(relation) if relation else link.relation
    ident = link_id(link.paper, link.technique)
    d = decision_iri(ident)
    paper, technique = NamedNode(link.paper), NamedNode(link.technique)
    score = 1.0 if status == "manual" else link.score
    evidence = list(link.evidence)
    if status == "manual":
        evidence = [Evidence("reader", note or "added by the reader (kg links add)", LINK_DECISIONS.value, chosen,
                             1.0), *evidence]
    t = [Triple(d, RDF.type, TKG.TechniqueLink), Triple(d, TKG.linkedPaper, paper),
         Triple(d, TKG.linkedTechnique, technique), Triple(d, TKG.linkRelation, RELATION_PROPERTIES[chosen]),
         Triple(d, TKG.linkScore, Literal(f"{Decimal(str(score)):.3f}", datatype=XSD.decimal)),
         Triple(d, TKG.linkStatus, text(status, None)), Triple(d, PROV.generatedAtTime, datetime_literal(at)),
         Triple(d, PROV.wasAttributedTo, READER), Triple(READER, RDF.type, PROV.Agent),
         Triple(READER, RDFS.label, text("the reader"))]
    if status != "manual":
        from kg.linking.model import link_iri

        t.append(Triple(d, TKG.decidedLink, link_iri(ident)))
    for n, item in enumerate(evidence[:8]):
        e = NamedNode(f"{d.value}/evidence/{n}")
        t += [Triple(d, TKG.linkEvidence, e), Triple(e, RDF.type, TKG.LinkEvidence),
              Triple(e, TKG.evidenceField, text(item.field, None)), Triple(e, TKG.evidenceText, text(item.text, None)),
              Triple(e, TKG.evidenceSource, NamedNode(item.source))]
    if status != "rejected":
        t.append(Triple(paper, RELATION_PROPERTIES[chosen], technique))
    stats = {"added": 1} if status == "manual" else {"updated": 1}
    from kg.store.base import Activity

    label = {"accepted": "kg links accept", "rejected": "kg links reject", "manual": "kg links add"}[status]
    with store.transaction(Activity(label, stats=stats)) as tx:
        tx.delete(LINK_DECISIONS, _forget(store, ident))
        tx.delete(LINKS, _links_direct(store, paper, technique))
        tx.insert(LINK_DECISIONS, t)
    return Decision(link.paper, link.technique, status, chosen, score, datetime_literal(at).value, evidence[:8])


def set_threshold(store: GraphStore, value: float) -> tuple[float, int, int]:
    """Make ``value`` the threshold, and the direct triples of ``links`` agree with it, in
    one transaction. Returns (the old threshold, triples removed, triples added)."""
    if not 0.0 <= value <= 1.0:
        raise KGError(f"a link threshold is between 0 and 1, not {value}", hint="For example: kg links threshold 0.6")
    old = threshold(store)
    decided = decided_pairs(store)
    want: set[Triple] = set()
    have: set[Triple] = set()
    rows = store.stream(f"""SELECT ?paper ?t ?rel ?score ?status WHERE {{ GRAPH {LINKS} {{
        ?l tkg:linkedPaper ?paper ; tkg:linkedTechnique ?t ; tkg:linkRelation ?rel ; tkg:linkScore ?score ;
           tkg:linkStatus ?status }} }}""")
    for paper, technique, rel, score, status in rows:
        if not isinstance(paper, NamedNode) or not isinstance(technique, NamedNode):
            continue
        relation = relation_of_property(rel.value) if isinstance(rel, NamedNode) else None
        if relation is None or not isinstance(score, Literal) or not isinstance(status, Literal):
            continue
        link = Link(paper.value, technique.value, relation, float(score.value), status.value)
        from kg.linking.write import visible

        if visible(link, decided, value):
            want.add(direct_triple(link))
    props = ", ".join(str(p) for p in RELATION_PROPERTIES.values())
    for s, p, o in store.stream(f"SELECT ?s ?p ?o WHERE {{ GRAPH {LINKS} {{ ?s ?p ?o FILTER(?p IN ({props})) }} }}"):
        if isinstance(s, NamedNode) and isinstance(p, NamedNode) and isinstance(o, NamedNode):
            have.add(Triple(s, p, o))
    settings = [Triple(SETTINGS, RDF.type, TKG.LinkSettings),
                Triple(SETTINGS, TKG.linkThreshold, Literal(f"{value:.3f}", datatype=XSD.decimal))]
    from kg.store.base import Activity

    removed, added = have - want, want - have
    with store.transaction(Activity("kg links threshold", stats={"added": len(added), "removed": len(removed)})) as tx:
        tx.update(f"DELETE WHERE {{ GRAPH {LINK_DECISIONS} {{ {SETTINGS} ?p ?o }} }}", touches=[LINK_DECISIONS])
        tx.insert(LINK_DECISIONS, settings)
        tx.delete(LINKS, sorted(removed, key=str))
        tx.insert(LINKS, sorted(added, key=str))
    return old, len(removed), len(added)


def by_technique(items: dict[tuple[str, str], Decision]) -> dict[str, list[Decision]]:
    out: dict[str, list[Decision]] = defaultdict(list)
    for (_paper, technique), decision in items.items():
        out[technique].append(decision)
    return out
