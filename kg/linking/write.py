"""The ``links`` graph: each link as a ``tkg:TechniqueLink`` node with its evidence, the
direct triple of each link queries should see, and the names each technique was linked by.

A link node (``id/link/<hex>``, one per paper and technique) carries ``tkg:linkedPaper``,
``tkg:linkedTechnique``, ``tkg:linkRelation`` (the sub-property of ``tkg:linksTechnique``),
``tkg:linkScore``, ``tkg:linkStatus`` and one ``tkg:linkEvidence`` node per piece of
evidence (``tkg:evidenceField``, ``tkg:evidenceText``, ``tkg:evidenceSource``). Beside it,
``paper tkg:<relation>Technique technique`` when queries should see it: an automatic link
whose score reaches the reader's threshold and on which the reader decided nothing. (A
decision's own triple lives in ``link-decisions``; a catalog's primary paper, linked as
*introduces* with status manual, is seen through the catalog's ``tkg:primaryPaper``, which
every query reads beside ``tkg:introducesTechnique``: one statement, not two.) Each
technique records the names it was linked by (``tkg:linkNames``, JSON) and the graph the
context rules' digest (``tkg:linkRules``), so that a later change of names re-links only
what it can change (:mod:`kg.linking.refresh`).

The whole graph is written through the store's bulk loader (:meth:`GraphStore.load_file`:
a replacement by the difference, journalled, so that a killed ``kg link`` leaves the links
as they were or, completed at the next open, as they became); the links of a few papers
by one transaction that deletes and inserts what differs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import pyoxigraph as ox

from kg import scratch
from kg.graphs import LINKS
from kg.linking.model import RELATION_PROPERTIES, Link, link_iri
from kg.pauses import pause_point
from kg.vocab import ID, RDF, TKG, XSD

if TYPE_CHECKING:
    from kg.store.base import Activity, GraphStore

__all__ = ["STATE", "direct_triple", "link_lines", "state_lines", "stored_decimal", "visible", "write_all",
           "write_papers"]

#: The node that holds the digest of the context rules the links were made with.
STATE = ID["links-state"]
_TYPE, _LINK, _EVIDENCE = f"<{RDF.type.value}>", f"<{TKG.TechniqueLink.value}>", f"<{TKG.LinkEvidence.value}>"
_P = {name: f"<{TKG[name].value}>" for name in ("linkedPaper", "linkedTechnique", "linkRelation", "linkScore",
                                                 "linkStatus", "linkEvidence", "evidenceField", "evidenceText",
                                                 "evidenceSource", "linkNames", "linkRules")}
_DECIMAL = f"^^<{XSD.decimal.value}>"
Decided = Mapping[tuple[str, str], str]


def visible(link: Link, decided: Decided, threshold: float) -> bool:
    """Whether ``link`` gets its direct triple in ``links``: an automatic link at or above
    ``threshold`` the reader left undecided. (Queries see a catalog's primary paper through
    its ``tkg:primaryPaper``, and a decided link through the reader's graph.)"""
    if (link.paper, link.technique) in decided or link.status != "auto":
        return False
    return link.score >= threshold


def direct_triple(link: Link) -> ox.Triple:
    return ox.Triple(ox.NamedNode(link.paper), RELATION_PROPERTIES[link.relation], ox.NamedNode(link.technique))


def _literal(value: str) -> str:
    return str(ox.Literal(value))


def stored_decimal(score: float) -> str:
    """``score`` to three places as the store keeps an xsd:decimal (``0.8``, ``1``, not
    ``0.800``): a line written otherwise would differ from the one read back, and every
    write of unchanged links would delete and insert its score again."""
    return f"{score:.3f}".rstrip("0").rstrip(".") or "0"


def link_lines(link: Link, *, shown: bool) -> Iterator[str]:
    """The N-Triples lines of ``link`` (and of its direct triple when ``shown``)."""
    node = f"<{link_iri(link.id).value}>"
    paper, technique = f"<{link.paper}>", f"<{link.technique}>"
    yield f"{node} {_TYPE} {_LINK} .\n"
    yield f"{node} {_P['linkedPaper']} {paper} .\n"
    yield f"{node} {_P['linkedTechnique']} {technique} .\n"
    yield f"{node} {_P['linkRelation']} <{RELATION_PROPERTIES[link.relation].value}> .\n"
    yield f'{node} {_P["linkScore"]} "{stored_decimal(link.score)}"{_DECIMAL} .\n'
    yield f'{node} {_P["linkStatus"]} "{link.status}" .\n'
    seen: set[str] = set()
    for item in link.evidence:
        key = hashlib.sha1(f"{item.field}\x1f{item.source}\x1f{item.text}".encode()).hexdigest()[:10]
        if key in seen:
            continue
        seen.add(key)
        evidence = f"<{link_iri(link.id).value}/evidence/{key}>"
        yield f"{node} {_P['linkEvidence']} {evidence} .\n"
        yield f"{evidence} {_TYPE} {_EVIDENCE} .\n"
        yield f"{evidence} {_P['evidenceField']} {_literal(item.field)} .\n"
        yield f"{evidence} {_P['evidenceText']} {_literal(item.text)} .\n"
        yield f"{evidence} {_P['evidenceSource']} <{item.source}> .\n"
    if shown:
        yield f"{paper} <{RELATION_PROPERTIES[link.relation].value}> {technique} .\n"


def state_lines(names: Mapping[str, Sequence[str]], rules: str) -> Iterator[str]:
    """What the links were made with: each technique's names, and the rules' digest."""
    for technique in sorted(names):
        yield f"<{technique}> {_P['linkNames']} {_literal(json.dumps(sorted(names[technique])))} .\n"
    yield f"<{STATE.value}> {_P['linkRules']} {_literal(rules)} .\n"


Progress = Callable[[str, int, int], None]


def write_all(store: GraphStore, links: Iterable[Link], *, decided: Decided, threshold: float,
              names: Mapping[str, Sequence[str]], rules: str, activity: Activity,
              progress: Progress | None = None) -> dict[str, int]:
    """Replace the ``links`` graph with ``links`` (and the names and rules they were made
    with) through the bulk loader; returns counts (links, shown, per relation and status)."""
    counts: dict[str, int] = {"links": 0, "shown": 0}
    with scratch.folder("techkg-links-") as folder:
        path = folder / "links.nt"
        with open(path, "w", encoding="utf-8") as out:
            for link in links:
                shown = visible(link, decided, threshold)
                out.writelines(link_lines(link, shown=shown))
                counts["links"] += 1
                counts["shown"] += shown
                counts[link.relation] = counts.get(link.relation, 0) + 1
                counts[link.status] = counts.get(link.status, 0) + 1
            out.writelines(state_lines(names, rules))
        pause_point("link.before-load")
        activity.stats.update({k: v for k, v in counts.items() if k in ("links", "shown")})

        def told(step: str, done: int, total: int) -> None:
            if progress is not None:
                progress(step, done, total)

        store.load_file(path, graph=LINKS, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False, activity=activity,
                        progress=told)
    return counts


def _parse(lines: Iterable[str]) -> set[ox.Triple]:
    data = "".join(lines).encode("utf-8")
    return {q.triple for q in ox.parse(data, format=ox.RdfFormat.N_TRIPLES)} if data else set()


def current_triples(store: GraphStore, papers: Sequence[str]) -> set[ox.Triple]:
    """The triples of ``links`` that belong to the links of ``papers``: their link nodes,
    evidence and direct triples."""
    if not papers:
        return set()
    bound = {"paper": [ox.NamedNode(p) for p in papers]}
    props = ", ".join(p.value.join("<>") for p in RELATION_PROPERTIES.values())
    out: set[ox.Triple] = set()
    queries = (
        f"SELECT ?s ?p ?o WHERE {{ GRAPH {LINKS} {{ ?s tkg:linkedPaper ?paper . ?s ?p ?o }} }}",
        f"SELECT ?s ?p ?o WHERE {{ GRAPH {LINKS} {{ ?l tkg:linkedPaper ?paper ; tkg:linkEvidence ?s . ?s ?p ?o }} }}",
        f"SELECT ?s ?p ?o WHERE {{ GRAPH {LINKS} {{ ?paper ?p ?o FILTER(?p IN ({props})) BIND(?paper AS ?s) }} }}",
    )
    for sparql in queries:
        for s, p, o in store.stream(sparql, bound):
            if isinstance(s, ox.NamedNode) and isinstance(p, ox.NamedNode) and o is not None:
                out.add(ox.Triple(s, p, o))
    return out


def write_papers(store: GraphStore, papers: Sequence[str], links: Iterable[Link], *, decided: Decided,
                 threshold: float, activity: Activity, extra: Iterable[str] = ()) -> tuple[int, int]:
    """Make the links of ``papers`` (all of them: a paper without links loses its old ones)
    ``links``, in one transaction that deletes and inserts only what differs; ``extra``:
    more N-Triples lines to keep in ``links`` (names and rules). Returns (removed, added)."""
    new = _parse(line for link in links for line in link_lines(link, shown=visible(link, decided, threshold)))
    old = current_triples(store, papers)
    extra_triples = _parse(extra)
    stale_state: set[ox.Triple] = set()
    if extra_triples:
        subjects = {t.subject for t in extra_triples}
        # (the two predicates bound first: a FILTER after ?s ?p ?o scanned the whole graph, 1.5 s at 700k papers)
        for s, p, o in store.stream(
                f"SELECT ?s ?p ?o WHERE {{ GRAPH {LINKS} {{ VALUES ?p {{ {_P['linkNames']} {_P['linkRules']} }} "
                "?s ?p ?o } }"):
            if s in subjects and isinstance(s, ox.NamedNode) and isinstance(p, ox.NamedNode) and o is not None:
                stale_state.add(ox.Triple(s, p, o))
    removed = (old - new) | (stale_state - extra_triples)
    added = (new - old) | (extra_triples - stale_state)
    if removed or added:
        pause_point("link.before-commit")
        with store.transaction(activity) as tx:
            tx.delete(LINKS, sorted(removed, key=str))
            tx.insert(LINKS, sorted(added, key=str))
    return len(removed), len(added)
