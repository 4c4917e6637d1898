"""The techniques the reader follows: chosen (``kg follow``), or until they choose, inferred.

The reader's choice lives in the user-owned ``follows`` graph as ``tkg:reader tkg:follows
<technique>``, each with when it was followed (``tkg:followedAt`` on a qualified node kept
beside it). Until the graph holds anything, what the reader follows is *inferred* as ``kg
suggest reading`` always did (:mod:`kg.readnext`): the techniques whose primary paper is on
the reading list, and those the papers read lately use. :func:`followed` gives either,
and says which (``Followed.inferred``): ``kg following``, ``kg suggest reading`` and the
news read it.

A change rewrites the small graph whole (one transaction, a snapshot first: ``kg undo``).
Unfollowing the last technique leaves the choice standing (the reader follows nothing);
:func:`forget` drops the graph, and the inference takes over again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Triple

from kg.graphs import FOLLOWS
from kg.iris import skolem
from kg.store.base import Activity, GraphStore, Transaction
from kg.vocab import PROV, RDF, RDFS, TKG, XSD, datetime_literal, text

__all__ = ["FollowedTechnique", "Followed", "chosen", "follow", "followed", "forget", "inferred", "unfollow"]

READER = TKG.reader


@dataclass(frozen=True)
class FollowedTechnique:
    """One technique the reader follows: its IRI, English name and id; when they chose to
    follow it (None when inferred), or why it is inferred."""

    iri: str
    name: str
    id: str
    since: str | None = None
    why: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"technique": self.iri, "name": self.name, "id": self.id, "since": self.since, "why": self.why}


@dataclass(frozen=True)
class Followed:
    """What the reader follows, and whether it is ``inferred`` (they have not chosen yet)."""

    techniques: tuple[FollowedTechnique, ...]
    inferred: bool

    @property
    def iris(self) -> list[str]:
        return [t.iri for t in self.techniques]

    def __iter__(self) -> Iterator[FollowedTechnique]:
        return iter(self.techniques)

    def __len__(self) -> int:
        return len(self.techniques)

    def __contains__(self, iri: object) -> bool:
        return iri in self.iris


def _names(store: GraphStore, iris: Sequence[str]) -> dict[str, tuple[str, str]]:
    if not iris:
        return {}
    rows = store.select(
        """SELECT ?t (MIN(?n) AS ?name) (MIN(?i) AS ?id) WHERE { ?t a tkg:Technique .
             OPTIONAL { ?t skos:prefLabel ?n FILTER(LANG(?n) = "en") } OPTIONAL { ?t skos:notation ?i } }
           GROUP BY ?t""", {"t": [NamedNode(i) for i in iris]}).records()
    return {r["t"]: (str(r["name"] or r["id"] or r["t"]), str(r["id"] or "")) for r in rows}


def chosen(store: GraphStore) -> dict[str, str | None] | None:
    """technique IRI → when the reader chose to follow it; None when they never chose."""
    rows = store.select(
        f"""SELECT ?t ?since WHERE {{ GRAPH {FOLLOWS} {{ {READER} a prov:Agent
              OPTIONAL {{ {READER} tkg:follows ?t OPTIONAL {{ ?f prov:entity ?t ; tkg:followedAt ?since }} }} }} }}"""
    ).records()
    if not rows:
        return None
    return {r["t"]: (str(r["since"]) if r["since"] is not None else None) for r in rows if r["t"] is not None}


def inferred(store: GraphStore) -> list[FollowedTechnique]:
    """What :mod:`kg.readnext` infers the reader follows: the techniques whose primary
    paper is on the reading list, then those the papers read lately introduce, extend or use
    (kg link's links, or the reader's)."""
    from kg.readnext import SparqlReadingFacts, recent_reads

    why: dict[str, str] = {}
    for row in store.select("""SELECT DISTINCT ?t WHERE { ?t a tkg:Technique ; tkg:primaryPaper ?p .
                                 ?p tkg:readingStatus ?s }""").records():
        why.setdefault(row["t"], "its paper is on your reading list")
    uses = recent_reads(SparqlReadingFacts(store))
    if uses:
        for row in store.select("SELECT DISTINCT ?t WHERE { ?r tkg:introducesTechnique|tkg:extendsTechnique|"
                                "tkg:usesTechnique ?t . ?t a tkg:Technique }",
                                {"r": [NamedNode(p) for p in uses]}).records():
            why.setdefault(row["t"], "papers you read lately introduce, extend or use it")
    names = _names(store, sorted(why))
    out = [FollowedTechnique(t, *names.get(t, (t, "")), why=reason) for t, reason in why.items()]
    return sorted(out, key=lambda f: f.name.casefold())


def followed(store: GraphStore) -> Followed:
    """The techniques the reader follows: chosen with ``kg follow``, or (until they choose)
    inferred from their reading, as :attr:`Followed.inferred` says."""
    picked = chosen(store)
    if picked is None:
        return Followed(tuple(inferred(store)), inferred=True)
    names = _names(store, sorted(picked))
    out = [FollowedTechnique(t, *names[t], since=since) for t, since in picked.items() if t in names]
    return Followed(tuple(sorted(out, key=lambda f: f.name.casefold())), inferred=False)


def _triples(picked: dict[str, str | None]) -> list[Triple]:
    out = [Triple(READER, RDF.type, PROV.Agent), Triple(READER, RDFS.label, text("the reader"))]
    for iri, since in sorted(picked.items()):
        node = NamedNode(iri)
        out.append(Triple(READER, TKG.follows, node))
        if since:
            f = skolem("follow", iri)
            out += [Triple(f, PROV.entity, node), Triple(f, TKG.followedAt, Literal(since, datatype=XSD.dateTime))]
    return out


def write_follows(tx: Transaction, picked: dict[str, str | None] | None) -> bool:
    """Put ``picked`` (None: no choice, the graph goes) into ``tx``."""
    if picked is None:
        return tx.drop_graph(FOLLOWS)
    return tx.replace_graph(FOLLOWS, _triples(picked))


def follow(store: GraphStore, techniques: Sequence[NamedNode], *, at: dt.datetime | None = None) -> list[str]:
    """Follow ``techniques`` (the reader's choice from now on); returns those newly followed."""
    before = chosen(store)
    picked = dict(before or {})
    stamp = datetime_literal(at or dt.datetime.now(dt.UTC)).value
    new = [t.value for t in dict.fromkeys(techniques) if t.value not in picked]
    for iri in new:
        picked[iri] = stamp
    if new or before is None:
        with store.transaction(Activity("kg follow", stats={"added": len(new)})) as tx:
            write_follows(tx, picked)
    return new


def unfollow(store: GraphStore, techniques: Sequence[NamedNode]) -> tuple[list[str], bool]:
    """Stop following ``techniques``; returns those dropped and whether the list was
    inferred until now (then the rest of the inferred list becomes the reader's choice)."""
    picked = chosen(store)
    was_inferred = picked is None
    if picked is None:
        picked = {f.iri: None for f in inferred(store)}
    gone = [t.value for t in dict.fromkeys(techniques) if t.value in picked]
    for iri in gone:
        del picked[iri]
    if gone:
        with store.transaction(Activity("kg unfollow", stats={"removed": len(gone)})) as tx:
            write_follows(tx, picked)
    return gone, was_inferred


def forget(store: GraphStore) -> bool:
    """Drop the reader's choice: what they follow is inferred again. False when there was none."""
    with store.transaction(Activity("kg unfollow --all")) as tx:
        dropped = write_follows(tx, None)
    return dropped
