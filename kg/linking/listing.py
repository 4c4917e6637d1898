"""Links as the reader sees them: each paper-technique pair once, with its status.

A pair the reader decided shows their verdict (accepted, rejected or manual) with the
relation, score and evidence they decided on; any other shows the linker's reading
(auto, or manual for a catalog's primary paper). ``kg links``, ``kg show``, the web's
technique page and the JSON rows (``paper, technique, relation, score, status, evidence:
[{field, text, source}]``) all read :func:`list_links`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from kg.graphs import LINKS, graph_name, own_first
from kg.linking.decisions import decisions, threshold
from kg.linking.model import (
    PRIORITY,
    RELATION_PROPERTIES,
    RELATIONS,
    Evidence,
    Link,
    link_id,
    links_about,
    relation_of_property,
)

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = ["LinkRow", "auto_links", "by_paper", "find_link", "iter_links", "links_of", "list_links",
           "techniques_of"]


@dataclass
class LinkRow:
    """One link with the names to show it by, and whether queries see it."""

    link: Link
    paper_title: str | None = None
    technique_name: str | None = None
    shown: bool = False
    reading_status: str | None = None
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.link.id

    def as_dict(self) -> dict[str, Any]:
        link = self.link
        return {"id": self.id, "paper": link.paper, "title": self.paper_title, "technique": link.technique,
                "technique_name": self.technique_name, "relation": link.relation, "score": link.score,
                "status": link.status, "shown": self.shown, "reading_status": self.reading_status,
                "evidence": [{"field": e.field, "text": e.text, "source": graph_name(NamedNode(e.source))}
                             for e in link.evidence]}


def auto_links(store: GraphStore, *, papers: list[str] | None = None, techniques: list[str] | None = None,
               relation: str | None = None, status: str | None = None,
               progress: Callable[[int], None] | None = None) -> dict[tuple[str, str], Link]:
    """The links of the ``links`` graph (or those of ``papers`` / ``techniques``, of
    ``relation``, of ``status``) with their evidence; ``progress`` is told how many rows
    were read, now and then (at 700k papers the whole graph takes about half a minute)."""
    bound = links_about(papers, techniques)
    if relation is not None:  # (the store starts from that relation's links: -r introduces at 700k, 1 s, not 38 s)
        bound["rel"] = [RELATION_PROPERTIES[relation]]
    if status is not None:
        bound["status"] = [Literal(status)]
    rows = store.stream(
        f"""SELECT ?paper ?technique ?rel ?score ?status ?f ?text ?src WHERE {{ GRAPH {LINKS} {{
              ?l tkg:linkedPaper ?paper ; tkg:linkedTechnique ?technique ; tkg:linkRelation ?rel ;
                 tkg:linkScore ?score ; tkg:linkStatus ?status ; tkg:linkEvidence ?e .
              ?e tkg:evidenceField ?f ; tkg:evidenceText ?text ; tkg:evidenceSource ?src }} }}""", bound or None)
    out: dict[tuple[str, str], Link] = {}
    for done, row in enumerate(rows, start=1):
        if progress is not None and done % 10_000 == 0:
            progress(done)
        paper, technique, rel, score, said, f, text, src = (_value(t) for t in row)
        if paper is None or technique is None or rel is None:
            continue
        key = (paper, technique)
        link = out.get(key)
        if link is None:
            link = out[key] = Link(paper, technique, relation_of_property(rel) or "mentions",
                                   float(score) if score is not None else 0.0, said or "auto")
        if f is not None and text is not None and src is not None:
            link.evidence.append(Evidence(f, text, src, link.relation))
    for link in out.values():
        link.evidence.sort(key=lambda e: (e.field != "catalog", e.field != "title", e.field, e.text))
    return out


def links_of(store: GraphStore, papers: list[str]) -> dict[tuple[str, str], Link]:
    """The links of ``papers`` as queries see them, with their evidence: the reader's verdict
    over the linker's reading, rejected links left out."""
    found = auto_links(store, papers=papers)
    for key, decision in decisions(store, papers=papers).items():
        if decision.status == "rejected":
            found.pop(key, None)
        else:
            found[key] = decision.as_link()
    return found


def _value(term: object) -> str | None:
    """A term's lexical value (an IRI's, a literal's); None when unbound."""
    value = getattr(term, "value", None)
    return value if isinstance(value, str) else None


def _names(store: GraphStore, papers: set[str], techniques: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    titles: dict[str, str] = {}
    if papers:
        for row in store.stream("SELECT ?p (MIN(STR(?t)) AS ?title) WHERE { ?p dcterms:title ?t } GROUP BY ?p",
                                {"p": [NamedNode(p) for p in sorted(papers)]}):
            p, t = _value(row[0]), _value(row[1])
            if p is not None and t is not None:
                titles[p] = t
    names: dict[str, str] = {}
    if techniques:
        for row in store.stream("""SELECT ?t (MIN(STR(?n)) AS ?name) WHERE { ?t skos:prefLabel ?n
                                     FILTER(LANG(?n) = "en") } GROUP BY ?t""",
                                {"t": [NamedNode(t) for t in sorted(techniques)]}):
            t, n = _value(row[0]), _value(row[1])
            if t is not None and n is not None:
                names[t] = n
    return titles, names


def _statuses(store: GraphStore, papers: set[str]) -> dict[str, str]:
    if not papers:
        return {}
    out: dict[str, str] = {}
    own = own_first("?p", "readingStatus", "?s", "own")
    for row in store.stream(f"SELECT ?p ?s WHERE {{ ?p tkg:readingStatus ?s . {own} }}",
                            {"p": [NamedNode(p) for p in papers]}):
        p, s = _value(row[0]), _value(row[1])
        if p is not None and s is not None:
            out[p] = s.rsplit("/", 1)[-1]
    return out


def list_links(store: GraphStore, *, technique: str | None = None, paper: str | None = None,
               relation: str | None = None, status: str | None = None, min_score: float | None = None,
               progress: Callable[[int], None] | None = None) -> list[LinkRow]:
    """Links (of ``technique`` / ``paper`` when given, IRIs), each pair once, the reader's
    verdict over the linker's reading; filtered by relation, status and least score;
    strongest relation first, then best score, then by name and title. ``progress``: as :func:`auto_links`."""
    papers = [paper] if paper else None
    techniques = [technique] if technique else None
    # The linker's links of that relation and status only: a verdict (all are read) replaces
    # the linker's reading of its pair, whatever relation or status either has.
    found = {} if status in ("accepted", "rejected") else auto_links(
        store, papers=papers, techniques=techniques, relation=relation, status=status, progress=progress)
    decided = decisions(store, papers=papers, techniques=techniques)
    limit = threshold(store)
    merged: dict[tuple[str, str], tuple[Link, bool]] = {}
    for key, link in found.items():
        merged[key] = (link, link.status == "manual" or link.score >= limit)  # manual: the catalog's primary paper
    for key, decision in decided.items():
        merged[key] = (decision.as_link(), decision.status != "rejected")
    rows = []
    for link, shown in merged.values():
        if relation is not None and link.relation != relation:
            continue
        if status is not None and link.status != status:
            continue
        if min_score is not None and link.score < min_score:
            continue
        rows.append(LinkRow(link, shown=shown))
    titles, names = _names(store, {r.link.paper for r in rows}, {r.link.technique for r in rows})
    statuses = _statuses(store, {r.link.paper for r in rows})
    for row in rows:
        row.paper_title = titles.get(row.link.paper)
        row.technique_name = names.get(row.link.technique)
        row.reading_status = statuses.get(row.link.paper)
    rows.sort(key=lambda r: (PRIORITY[r.link.relation], -r.link.score, (r.technique_name or "").casefold(),
                             (r.paper_title or r.link.paper).casefold(), r.link.technique, r.link.paper))
    return rows


def iter_links(store: GraphStore, *, technique: str | None = None, paper: str | None = None,
               relation: str | None = None, status: str | None = None, min_score: float | None = None,
               progress: Callable[[str, int], None] | None = None) -> Iterator[list[LinkRow]]:
    """:func:`list_links`'s rows in its order, in parts: a relation at a time where nothing
    else narrows them (the whole links graph), so that the first rows come at once and not
    after every link is read (at 700k papers: the first rows in 0.25 s, then 7–17 s for each
    other relation, against 48 s before the first row). ``progress`` is told the relation
    being read and how many rows of it were read."""
    def told(name: str) -> Callable[[int], None] | None:
        return None if progress is None else lambda done: progress(name, done)

    if relation is not None or technique is not None or paper is not None:
        yield list_links(store, technique=technique, paper=paper, relation=relation, status=status,
                         min_score=min_score, progress=told(relation or "links"))
        return
    for name in RELATIONS:
        yield list_links(store, relation=name, status=status, min_score=min_score, progress=told(name))


def find_link(store: GraphStore, ident: str) -> LinkRow | None:
    """The link with id ``ident`` (``ln-`` and its 16 hex digits, or a unique prefix of at
    least 6); None when there is none. A prefix that fits several raises KGError."""
    from kg.errors import KGError

    wanted = ident.strip().lower()
    if not wanted.startswith("ln-"):
        wanted = "ln-" + wanted
    hexpart = wanted[3:]
    if len(hexpart) < 6 or any(c not in "0123456789abcdef" for c in hexpart):
        return None
    from kg.graphs import LINK_DECISIONS

    pairs: set[tuple[str, str]] = set()
    for graph, base in ((LINKS, "https://w3id.org/techkg/id/link/"),
                        (LINK_DECISIONS, "https://w3id.org/techkg/id/link-decision/")):
        rows = store.select(
            f"""SELECT DISTINCT ?paper ?technique WHERE {{ GRAPH {graph} {{ ?l a tkg:TechniqueLink ;
                  tkg:linkedPaper ?paper ; tkg:linkedTechnique ?technique }} FILTER(STRSTARTS(STR(?l), ?prefix)) }}""",
            {"prefix": Literal(base + hexpart)})
        pairs |= {(r["paper"].value, r["technique"].value) for r in rows.rows  # type: ignore[union-attr]
                  if r["paper"] is not None and r["technique"] is not None}
    pairs = {p for p in pairs if link_id(*p).startswith(wanted)}
    if len(pairs) > 1:
        raise KGError(f"{ident} fits {len(pairs)} links",
                      hint="Give more of the id: " + ", ".join(sorted(link_id(*p) for p in pairs)[:4]) + ".")
    if not pairs:
        return None
    paper, technique = pairs.pop()
    rows_found = list_links(store, paper=paper, technique=technique)
    return rows_found[0] if rows_found else None


def by_relation(rows: list[LinkRow]) -> dict[str, list[LinkRow]]:
    out: dict[str, list[LinkRow]] = defaultdict(list)
    for row in rows:
        out[row.link.relation].append(row)
    return out


def techniques_of(store: GraphStore, papers: list[str]) -> dict[str, list[dict[str, str]]]:
    """Paper IRI → the techniques queries see it linked to (introduces, extends, uses,
    evaluates; its primary paper counts as introduces), strongest first: ``{technique,
    name, relation}`` each."""
    if not papers:
        return {}
    from kg.linking.model import RELATION_PROPERTIES

    values = " ".join(f"({RELATION_PROPERTIES[r]} {PRIORITY[r]})" for r in ("introduces", "extends", "uses",
                                                                          "evaluates"))
    rows = store.stream(
        f"""SELECT ?p ?t (MIN(?rank) AS ?best) (MIN(STR(?n)) AS ?name) WHERE {{
              {{ ?t tkg:primaryPaper ?p BIND(0 AS ?rank) }}
              UNION {{ ?p ?rel ?t VALUES (?rel ?rank) {{ {values} }} }}
              ?t skos:prefLabel ?n FILTER(LANG(?n) = "en") }} GROUP BY ?p ?t""",
        {"p": [NamedNode(p) for p in papers]})
    found = ((_value(t) for t in row) for row in rows)
    return by_paper((paper, technique, int(best), name) for paper, technique, best, name in found
                    if paper and technique and best is not None and name)


def by_paper(links: Iterable[tuple[str, str, int, str]]) -> dict[str, list[dict[str, str]]]:
    """``(paper, technique, rank, name)`` rows (rank: :data:`PRIORITY` of the strongest
    relation) as :func:`techniques_of` gives them, whoever read them (the store, or
    kg.analytics.lookups from the tables)."""
    from kg.linking.model import RELATIONS

    found: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for paper, technique, rank, name in links:
        found[paper].append((rank, name, technique))
    return {p: [{"technique": t, "name": n, "relation": RELATIONS[rank]} for rank, n, t in sorted(items)]
            for p, items in found.items()}
