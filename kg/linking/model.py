"""What a link is: a paper, a technique, a relation, a score, a status and its evidence."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import NamedNode

from kg.vocab import ID, TKG

__all__ = [
    "FIELDS",
    "FIELD_WEIGHTS",
    "PRIORITY",
    "RELATIONS",
    "RELATION_PROPERTIES",
    "STATUSES",
    "Evidence",
    "Link",
    "PaperText",
    "TextField",
    "link_id",
    "link_iri",
    "links_about",
    "relation_of_property",
    "strongest",
]

#: The five relations, strongest first (a link shows the strongest its evidence reads).
RELATIONS: tuple[str, ...] = ("introduces", "extends", "uses", "evaluates", "mentions")
PRIORITY: dict[str, int] = {r: i for i, r in enumerate(RELATIONS)}
#: Each relation's property, a sub-property of tkg:linksTechnique (uses is tkg:usesTechnique).
RELATION_PROPERTIES: dict[str, NamedNode] = {r: TKG[f"{r}Technique"] for r in RELATIONS}
STATUSES: tuple[str, ...] = ("auto", "accepted", "rejected", "manual")
#: Where evidence is read, and how much a name found there counts (before the name's own
#: certainty and the wording's): a title is the paper's topic; a reading-list category or a
#: citation's flags say least.
FIELD_WEIGHTS: dict[str, float] = {
    "title": 0.9, "abstract": 0.8, "tldr": 0.75, "citation-context": 0.7, "reading-list-why": 0.8,
    "reading-list-category": 0.45, "zotero-tag": 0.85, "zotero-note": 0.7, "catalog": 1.0, "reader": 1.0,
}
FIELDS: tuple[str, ...] = tuple(FIELD_WEIGHTS)


def relation_of_property(iri: str) -> str | None:
    """``uses`` for tkg:usesTechnique and so on; None for another property."""
    return next((r for r, p in RELATION_PROPERTIES.items() if p.value == iri), None)


def link_id(paper: str, technique: str) -> str:
    """The stable id of the link between ``paper`` and ``technique`` (IRIs): one per pair,
    whatever relation the evidence reads, so that a verdict on it outlives a new reading."""
    return "ln-" + hashlib.sha1(f"{paper}\x1f{technique}".encode()).hexdigest()[:16]


def link_iri(ident: str) -> NamedNode:
    return ID["link/" + ident.removeprefix("ln-")]


@dataclass(frozen=True)
class TextField:
    """One text of a paper the linker reads: which field, the text, the graph it is in."""

    field: str
    text: str
    source: str


@dataclass
class PaperText:
    """A paper's texts and categories (arXiv categories, Semantic Scholar fields of study)."""

    iri: str
    fields: list[TextField] = field(default_factory=list)
    categories: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Evidence:
    """What backs a link: the field, the text that names the technique (a sentence, or the
    whole field when it is short), the graph it came from, and what it reads as."""

    field: str
    text: str
    source: str
    relation: str = "mentions"
    score: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "text": self.text, "source": self.source}


@dataclass
class Link:
    paper: str
    technique: str
    relation: str
    score: float
    status: str = "auto"
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def id(self) -> str:
        return link_id(self.paper, self.technique)


def strongest(evidence: list[Evidence]) -> tuple[str, float]:
    """The relation a link's evidence reads (the strongest any item reads, among those that
    count: an item scoring a third of the best or less does not choose the relation), and
    the link's score: ``1 - Π(1 - s)`` over the best item of each field and source."""
    best: dict[tuple[str, str], float] = {}
    for item in evidence:
        key = (item.field, item.source)
        best[key] = max(best.get(key, 0.0), item.score)
    rest = 1.0
    for value in best.values():
        rest *= 1.0 - value
    top = max((e.score for e in evidence), default=0.0)
    counted = [e for e in evidence if e.score > top / 3]
    relation = min((e.relation for e in counted), key=PRIORITY.__getitem__, default="mentions")
    return relation, round(min(0.99, 1.0 - rest), 3)


def links_about(papers: list[str] | None, techniques: list[str] | None) -> dict[str, Any]:
    """The bindings that narrow a query of links to those of ``papers`` and/or ``techniques``
    (IRIs; None: any)."""
    bound: dict[str, Any] = {}
    if papers is not None:
        bound["paper"] = [NamedNode(p) for p in papers]
    if techniques is not None:
        bound["technique"] = [NamedNode(t) for t in techniques]
    return bound
