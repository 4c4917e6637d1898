"""What is new (``kg news``, the workbench's What's new page, the Atom feeds): papers that
appeared since the reader last looked and are linked to a technique they follow.

A paper is *new* when its date (``dcterms:issued``, else ``dcterms:modified``) is on or
after the point asked for, and the reader has not marked it seen. The point is a duration
(``7d``, ``2w``, ``36h``), a date, or ``last``: the reader's last look, which ``kg news
--seen`` records (with the papers it showed) in the user-owned ``news`` graph; with no last
look, ``last`` is a week ago.

Papers are linked to techniques by the direct triples ``?paper tkg:introducesTechnique |
tkg:extendsTechnique | tkg:evaluatesTechnique | tkg:usesTechnique | tkg:mentionsTechnique |
tkg:linksTechnique ?technique`` (the catalog's ``tkg:primaryPaper`` counts as introducing),
with the link's score and evidence from its ``tkg:TechniqueLink`` node where kg link made
one or the reader decided it (:func:`_link_details`; a rejected link has no direct triple,
so it is never news). Each new paper is shown once, by its strongest link to
a followed technique, and ranked by

    0.4 · link strength + 0.3 · relation + 0.15 · influence + 0.15 · recency

where strength is the link's score (else the relation's weight), the relation weighs
introduces 1, extends 0.85, evaluates 0.6, uses 0.5, links 0.4, mentions 0.3 (so that
introducing and extending come first), influence is the citation count on a log scale
(1,000 citations: 1) and recency halves every 30 days.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode, Triple

from kg.errors import KGError
from kg.graphs import NEWS
from kg.iris import paper_link
from kg.vocab import TKG, datetime_literal

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = ["RELATIONS", "NewsItem", "NewsReport", "last_look", "mark_seen", "news", "since_point"]

#: The link relations, strongest first, with their weight and the verb a reason uses.
RELATIONS: dict[str, tuple[float, str]] = {
    "introducesTechnique": (1.0, "introduces"),
    "extendsTechnique": (0.85, "extends"),
    "evaluatesTechnique": (0.6, "evaluates"),
    "usesTechnique": (0.5, "uses"),
    "linksTechnique": (0.4, "is linked to"),
    "mentionsTechnique": (0.3, "mentions"),
}
READER = TKG.reader
HALF_LIFE_DAYS = 30.0
_LINKS = ", ".join(f"tkg:{r}" for r in RELATIONS)


@dataclass
class NewsItem:
    paper: str
    title: str
    date: str
    technique: str
    technique_name: str
    relation: str
    strength: float
    score: float = 0.0
    evidence: str | None = None
    evidence_field: str | None = None
    evidence_source: str | None = None
    also: list[str] = field(default_factory=list)
    citations: int | None = None
    venue: str | None = None
    arxiv: str | None = None
    doi: str | None = None
    seen: bool = False

    @property
    def verb(self) -> str:
        return RELATIONS.get(self.relation, (0.0, "is linked to"))[1]

    @property
    def reason(self) -> str:
        text = f"{self.verb} {self.technique_name}"
        if self.evidence:
            text += f": “{_short(self.evidence, 200)}”"
        if self.also:
            text += f" (also {', '.join(self.also)})"
        return text

    @property
    def link(self) -> str:
        return paper_link(self.arxiv, self.doi, self.paper)

    def as_dict(self) -> dict[str, Any]:
        return {"paper": self.paper, "title": self.title, "date": self.date, "technique": self.technique,
                "technique_name": self.technique_name, "relation": self.verb, "strength": round(self.strength, 3),
                "score": round(self.score, 3), "reason": self.reason, "evidence": self.evidence,
                "evidence_field": self.evidence_field, "evidence_source": self.evidence_source, "also": self.also,
                "citations": self.citations, "venue": self.venue, "link": self.link, "seen": self.seen}


@dataclass
class NewsReport:
    since: dt.datetime
    since_label: str
    items: list[NewsItem]
    followed: list[tuple[str, str, bool]]  # (technique IRI, name, inferred)
    last_look: dt.datetime | None
    total: int = 0

    @property
    def inferred(self) -> bool:
        return bool(self.followed) and all(inferred for _t, _n, inferred in self.followed)


def _short(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1].rsplit(" ", 1)[0] + "…"


def last_look(store: GraphStore) -> dt.datetime | None:
    """When the reader last marked what is new as seen (``kg news --seen``), if ever."""
    rows = store.select(f"SELECT (MAX(?at) AS ?last) WHERE {{ GRAPH {NEWS} {{ ?r tkg:lastLook ?at }} }}")
    value = rows.rows[0]["last"] if rows.rows else None
    return _instant(value.value) if isinstance(value, Literal) else None


def _instant(text: str) -> dt.datetime | None:
    """A date or date-time as an aware instant (a date at midnight UTC; a year on 1 January)."""
    value = text.strip()
    if re.fullmatch(r"\d{4}", value):
        value += "-01-01"
    elif re.fullmatch(r"\d{4}-\d{2}", value):
        value += "-01"
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def since_point(spec: str | None, last: dt.datetime | None, now: dt.datetime | None = None
                ) -> tuple[dt.datetime, str]:
    """The instant ``--since`` names and how to say it: ``7d``, ``2w``, ``36h``, ``3m``, ``1y``, a date
    (YYYY-MM-DD), or ``last`` (the last look; a week ago when there was none). Default: last."""
    now = now or dt.datetime.now(dt.UTC)
    text = (spec or "last").strip().lower()
    if text == "last":
        if last is not None:
            return last, f"your last look ({last:%Y-%m-%d %H:%M} UTC)"
        return now - dt.timedelta(days=7), "a week ago (no last look yet: kg news --seen records one)"
    m = re.fullmatch(r"(\d+)\s*([hdwmy])", text)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        delta = {"h": dt.timedelta(hours=n), "d": dt.timedelta(days=n), "w": dt.timedelta(weeks=n),
                 "m": dt.timedelta(days=30 * n), "y": dt.timedelta(days=365 * n)}[unit]
        word = {"h": "hour", "d": "day", "w": "week", "m": "month", "y": "year"}[unit]
        return now - delta, f"the last {n} {word}{'s' if n != 1 else ''}"
    moment = _instant(text) if re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?([t ][\d:.]+(z|[+-]\d{2}:?\d{2})?)?", text) \
        else None
    if moment is None:
        raise KGError(f"{spec!r} is not a point in time --since takes",
                      hint="Give a duration (7d, 2w, 36h), a date (2026-05-01) or last (your last look).")
    return moment, moment.strftime("%Y-%m-%d")


# -- what is linked, and how -------------------------------------------------------------------


def _followed_named(store: GraphStore, only: NamedNode | None) -> list[tuple[str, str, bool]]:
    """(technique, name, inferred) of the techniques news is about: ``only``, or those the
    reader follows (:func:`kg.follows.followed`: chosen with kg follow, else inferred)."""
    from kg.follows import followed

    if only is not None:
        chosen = [(only.value, False)]
    else:
        follows = followed(store)
        chosen = [(iri, follows.inferred) for iri in follows.iris]
    if not chosen:
        return []
    rows = store.select("""SELECT ?t (MIN(?n) AS ?name) WHERE { ?t skos:prefLabel ?n FILTER(LANG(?n) = "en") }
                           GROUP BY ?t""", {"t": [NamedNode(t) for t, _i in chosen]})
    names = {r["t"]: str(r["name"]) for r in rows.records() if r["name"] is not None}
    return [(t, names.get(t, t.rsplit("/", 1)[-1]), inferred) for t, inferred in chosen]


def _linked(store: GraphStore, techniques: Sequence[str], since: dt.datetime) -> list[dict[str, Any]]:
    """(paper, technique, relation, date) of the papers linked to ``techniques`` dated on or
    after ``since`` (walks from the techniques, then reads the papers' dates, bound)."""
    bound = {"t": [NamedNode(t) for t in techniques]}
    rows = store.select(
        f"""SELECT DISTINCT ?paper ?t ?rel WHERE {{
              {{ ?paper ?rel ?t FILTER(?rel IN ({_LINKS})) }}
              UNION {{ ?t tkg:primaryPaper ?paper BIND(tkg:introducesTechnique AS ?rel) }} }}""", bound).records()
    papers = sorted({r["paper"] for r in rows if isinstance(r["paper"], str)})
    dates: dict[str, str] = {}
    for start in range(0, len(papers), 2000):
        chunk = [NamedNode(p) for p in papers[start:start + 2000]]
        for r in store.select("""SELECT ?p (MIN(STR(?d)) AS ?date) WHERE {
                                   { ?p dcterms:issued ?d } UNION { ?p dcterms:modified ?d } } GROUP BY ?p""",
                              {"p": chunk}).records():
            if r["date"] is not None:
                dates[r["p"]] = str(r["date"])
    out = []
    for r in rows:
        date = dates.get(r["paper"])
        moment = _instant(date) if date else None
        if moment is not None and moment >= since:
            out.append({"paper": r["paper"], "technique": r["t"], "relation": str(r["rel"]).rsplit("#", 1)[-1],
                        "date": date})
    return out


def _link_details(store: GraphStore, papers: Sequence[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """The score and the first piece of evidence of each (paper, technique) link of
    ``papers`` that kg link made or the reader decided (:func:`kg.linking.listing.links_of`:
    the ``tkg:TechniqueLink`` nodes of the ``links`` and ``link-decisions`` graphs)."""
    from kg.graphs import graph_name
    from kg.linking.listing import links_of

    out: dict[tuple[str, str], dict[str, Any]] = {}
    for start in range(0, len(papers), 1000):
        for key, link in links_of(store, list(papers[start:start + 1000])).items():
            first = link.evidence[0] if link.evidence else None
            out[key] = {"score": link.score, "evidence": first.text if first else None,
                        "field": first.field if first else None,
                        "source": graph_name(NamedNode(first.source)) if first and first.source else None}
    return out


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _about(store: GraphStore, papers: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(papers), 2000):
        chunk = [NamedNode(p) for p in papers[start:start + 2000]]
        rows = store.select(
            """SELECT ?p (MIN(?t) AS ?title) (MIN(?v) AS ?venue) (MIN(?a) AS ?arxiv) (MIN(?d) AS ?doi)
                      (MAX(?c) AS ?citations) WHERE {
                 OPTIONAL { ?p dcterms:title ?t } OPTIONAL { ?p tkg:venue ?v } OPTIONAL { ?p tkg:arxivId ?a }
                 OPTIONAL { ?p bibo:doi ?d } OPTIONAL { ?p tkg:citationCount ?c } } GROUP BY ?p""", {"p": chunk})
        for r in rows.records():
            out[r["p"]] = {"title": _text(r["title"]), "venue": _text(r["venue"]), "arxiv": _text(r["arxiv"]),
                           "doi": _text(r["doi"]),
                           "citations": int(r["citations"]) if r["citations"] is not None else None}
    return out


def _seen(store: GraphStore) -> set[str]:
    rows = store.select(f"SELECT DISTINCT ?p WHERE {{ GRAPH {NEWS} {{ ?r tkg:sawPaper ?p }} }}")
    return {r["p"] for r in rows.records() if isinstance(r["p"], str)}


def _rank(item: NewsItem, now: dt.datetime) -> float:
    relation: float = RELATIONS.get(item.relation, (0.3, ""))[0]
    influence = min(1.0, math.log10(1 + (item.citations or 0)) / 3)
    moment = _instant(item.date)
    days = max(0.0, (now - moment).total_seconds() / 86400) if moment else 365.0
    recency = float(0.5 ** (days / HALF_LIFE_DAYS))
    return 0.4 * item.strength + 0.3 * relation + 0.15 * influence + 0.15 * recency


def news(store: GraphStore, *, since: str | None = None, technique: NamedNode | None = None, limit: int = 50,
         include_seen: bool = False, now: dt.datetime | None = None) -> NewsReport:
    """The new papers linked to the followed techniques (or to ``technique``), best first."""
    now = now or dt.datetime.now(dt.UTC)
    last = last_look(store)
    point, label = since_point(since, last, now)
    chosen = _followed_named(store, technique)
    report = NewsReport(point, label, [], chosen, last)
    if not chosen:
        return report
    names = {t: n for t, n, _i in chosen}
    linked = _linked(store, list(names), point)
    seen = set() if include_seen else _seen(store)
    linked = [row for row in linked if row["paper"] not in seen]
    papers = sorted({row["paper"] for row in linked})
    details = _link_details(store, papers)
    about = _about(store, papers)
    by_paper: dict[str, list[NewsItem]] = defaultdict(list)
    for row in linked:
        info, link = about.get(row["paper"], {}), details.get((row["paper"], row["technique"]), {})
        weight = RELATIONS.get(row["relation"], (0.3, ""))[0]
        item = NewsItem(row["paper"], info.get("title") or row["paper"], row["date"], row["technique"],
                        names[row["technique"]], row["relation"],
                        link["score"] if link.get("score") is not None else weight,
                        evidence=link.get("evidence"), evidence_field=link.get("field"),
                        evidence_source=link.get("source"), citations=info.get("citations"),
                        venue=info.get("venue"), arxiv=info.get("arxiv"), doi=info.get("doi"))
        item.score = _rank(item, now)
        by_paper[row["paper"]].append(item)
    items = []
    for candidates in by_paper.values():
        candidates.sort(key=lambda i: (-i.score, i.technique_name))
        best = candidates[0]
        best.also = [f"{c.verb} {c.technique_name}" for c in candidates[1:]]
        items.append(best)
    items.sort(key=lambda i: (-i.score, i.date, i.title))
    report.total = len(items)
    report.items = items[:limit]
    return report


def mark_seen(store: GraphStore, papers: Iterable[str], *, at: dt.datetime | None = None) -> int:
    """Record a look now: the reader's last look, and ``papers`` as seen (one write)."""
    from kg.store.base import Activity

    at = at or dt.datetime.now(dt.UTC)
    chosen = sorted(set(papers))
    triples = [Triple(READER, TKG.lastLook, datetime_literal(at, precise=True))]
    triples += [Triple(READER, TKG.sawPaper, NamedNode(p)) for p in chosen]
    with store.transaction(Activity("kg news --seen", stats={"updated": len(chosen)})) as tx:
        tx.update(f"DELETE WHERE {{ GRAPH {NEWS} {{ {READER} tkg:lastLook ?at }} }}", touches=[NEWS])
        tx.insert(NEWS, triples)
    return len(chosen)
