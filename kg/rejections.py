"""Papers the reader rejected from ``kg suggest reading``, in the user-owned
``reading-decisions`` graph: never suggested again, and given to Semantic Scholar's
list-based recommendations as papers to be unlike (``kg ingest citations --recommendations``).

A rejection is a ``tkg:ReadingDecision`` (``tkg:verdict "rejected"``, the paper, when, and
the reason the suggestion gave), attributed to the reader; one small atomic insert, and
rejecting a paper again leaves one decision. The ids ``kg suggest reading`` shows
(``rd-`` and 8 hex digits) are made from the paper's IRI.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from pyoxigraph import NamedNode, Triple

from kg.graphs import READING_DECISIONS
from kg.store.base import Activity, GraphStore
from kg.vocab import ID, PROV, RDF, RDFS, TKG, datetime_literal, text

__all__ = ["READER", "Rejection", "reading_id", "reject", "rejected", "unreject"]

#: The person using TechKG (the same agent lineage decisions are attributed to).
READER = ID["agent/reader"]


def reading_id(paper: str) -> str:
    """The stable id of a reading suggestion of ``paper`` (an IRI)."""
    return "rd-" + hashlib.sha1(paper.encode()).hexdigest()[:8]


def _node(paper: str) -> NamedNode:
    return ID["reading-decision/" + reading_id(paper)]


@dataclass(frozen=True)
class Rejection:
    paper: str
    id: str
    at: str
    reason: str | None = None


def rejected(store: GraphStore) -> dict[str, Rejection]:
    """Every rejected paper (IRI) with its rejection."""
    rows = store.select(
        f"""SELECT ?paper ?at ?reason WHERE {{ GRAPH {READING_DECISIONS} {{
              ?d a tkg:ReadingDecision ; tkg:verdict "rejected" ; tkg:paper ?paper ; prov:generatedAtTime ?at .
              OPTIONAL {{ ?d rdfs:comment ?reason }} }} }}""")
    out = {}
    for row in rows.records():
        paper = str(row["paper"])
        out[paper] = Rejection(paper, reading_id(paper), str(row["at"]),
                               None if row["reason"] is None else str(row["reason"]))
    return out


def reject(store: GraphStore, papers: Iterable[str], *, reason: str | None = None,
           at: dt.datetime | None = None) -> list[Rejection]:
    """Reject ``papers`` (IRIs) in one write; they are never suggested again."""
    at = at or dt.datetime.now(dt.UTC)
    stamp = datetime_literal(at)
    chosen = list(dict.fromkeys(papers))
    triples: list[Triple] = [Triple(READER, RDF.type, PROV.Agent), Triple(READER, RDFS.label, text("the reader"))]
    for paper in chosen:
        d = _node(paper)
        triples += [Triple(d, RDF.type, TKG.ReadingDecision), Triple(d, TKG.verdict, text("rejected", None)),
                    Triple(d, TKG.paper, NamedNode(paper)), Triple(d, PROV.generatedAtTime, stamp),
                    Triple(d, PROV.wasAttributedTo, READER)]
        if reason:
            triples.append(Triple(d, RDFS.comment, text(reason, None)))
    with store.transaction(Activity("kg suggest reading reject", stats={"updated": len(chosen)})) as tx:
        for paper in chosen:
            tx.update(f"DELETE WHERE {{ GRAPH {READING_DECISIONS} {{ {_node(paper)} ?p ?o }} }}",
                      touches=[READING_DECISIONS])
        tx.insert(READING_DECISIONS, triples)
    return [Rejection(p, reading_id(p), stamp.value, reason) for p in chosen]


def unreject(store: GraphStore, papers: Iterable[str]) -> int:
    """Take back the rejection of ``papers``; how many were rejected."""
    chosen = [p for p in dict.fromkeys(papers) if p in rejected(store)]
    if chosen:
        with store.transaction(Activity("kg suggest reading unreject", stats={"updated": len(chosen)})) as tx:
            for paper in chosen:
                tx.update(f"DELETE WHERE {{ GRAPH {READING_DECISIONS} {{ {_node(paper)} ?p ?o }} }}",
                          touches=[READING_DECISIONS])
    return len(chosen)
