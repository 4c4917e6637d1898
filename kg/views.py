"""Read models over the graph for ``kg show``, ``kg lineage``, ``kg compare`` and
``kg stats``; the web app renders the same ones. They read through the named queries
and the store interface only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyoxigraph import NamedNode

import queries
from kg.catalog import DIMENSIONS
from kg.graphs import graph_name
from kg.resolve import technique_names
from kg.results import Solutions, python_value
from kg.store.base import GraphStore

__all__ = [
    "Edge",
    "LineageNode",
    "compare",
    "kernel_status",
    "lineage_edges",
    "lineage_tree",
    "stats",
    "technique_card",
]


def _records(result: object) -> list[dict[str, Any]]:
    assert isinstance(result, Solutions)
    return result.records()


def technique_card(store: GraphStore, technique: NamedNode) -> dict[str, Any]:
    """Everything ``kg show`` prints about one technique."""
    params = {"technique": technique.value}
    rows = _records(queries.run(store, "technique", params))
    if not rows:
        return {}
    card = rows[0]
    dims = {r["property"]: r["value"] for r in _records(queries.run(store, "technique-dimensions", params))}
    card["dimensions"] = [
        (label, dims.get(prop.value)) for key, prop, label in DIMENSIONS if prop.value in dims
    ]
    card["papers"] = _records(queries.run(store, "technique-papers", params))
    edges = lineage_edges(store)
    card["parents"] = [(e.parent_name, e.relation) for e in edges if e.child == technique.value]
    card["children"] = [(e.child_name, e.relation) for e in edges if e.parent == technique.value]
    card["kernel"] = kernel_status(store).get(technique.value, "missing")
    card["repository_stats"] = _repo_stats(store, card.get("repository"))
    return card


def _repo_stats(store: GraphStore, repository: str | None) -> dict[str, Any]:
    if not repository:
        return {}
    rows = store.select(
        """SELECT ?repo (MAX(?s) AS ?stars) (MAX(?p) AS ?pushed) (SAMPLE(?l) AS ?license) WHERE {
             OPTIONAL { ?repo tkg:stars ?s } OPTIONAL { ?repo tkg:pushedAt ?p }
             OPTIONAL { ?repo schema:license ?l } } GROUP BY ?repo""",
        {"repo": NamedNode(repository)},
    )
    record = rows.records()[0] if rows.rows else {}
    return {k: v for k, v in record.items() if v is not None and k != "repo"}


@dataclass(frozen=True)
class Edge:
    child: str
    child_name: str
    parent: str
    parent_name: str
    relation: str
    basis: str
    note: str | None


def lineage_edges(store: GraphStore) -> list[Edge]:
    return [
        Edge(r["child"], r["childName"], r["parent"], r["parentName"], r["relation"],
             r["basis"] or "stated", r["note"])
        for r in _records(queries.run(store, "lineage-edges"))
    ]


@dataclass
class LineageNode:
    iri: str
    name: str
    relation: str | None = None
    children: list[LineageNode] = field(default_factory=list)
    #: How the edge to this node is known: stated, inferred, or accepted (added by the reader).
    basis: str | None = None
    note: str | None = None


def lineage_tree(
    store: GraphStore, technique: NamedNode, *, direction: str = "both", depth: int = 10
) -> tuple[LineageNode, LineageNode]:
    """(ancestors, descendants) of ``technique`` as trees rooted at it. Cycles are cut."""
    edges = lineage_edges(store)
    names = {iri: name for iri, (name, _id) in technique_names(store).items()}
    up: dict[str, list[Edge]] = defaultdict(list)
    down: dict[str, list[Edge]] = defaultdict(list)
    for e in edges:
        up[e.child].append(e)
        down[e.parent].append(e)

    def grow(iri: str, via: Edge | None, level: int, seen: frozenset[str], upward: bool) -> LineageNode:
        node = LineageNode(iri, names.get(iri, iri), via.relation if via else None,
                           basis=via.basis if via else None, note=via.note if via else None)
        if level >= depth:
            return node
        for e in (up if upward else down).get(iri, []):
            nxt = e.parent if upward else e.child
            if nxt not in seen:
                node.children.append(grow(nxt, e, level + 1, seen | {nxt}, upward))
        node.children.sort(key=lambda n: n.name.casefold())
        return node

    root = technique.value
    bare = LineageNode(root, names.get(root, root))
    ancestors = grow(root, None, 0, frozenset({root}), True) if direction in ("up", "both") else bare
    descendants = grow(root, None, 0, frozenset({root}), False) if direction in ("down", "both") else bare
    return ancestors, descendants


def kernel_status(store: GraphStore) -> dict[str, str]:
    """technique IRI → verified | failing | unverified | none (a reasoned "no kernel"), from
    the latest verification run. Techniques without any kernel record are absent."""
    rows = store.select(
        """SELECT ?t ?form ?passed ?ended WHERE {
             ?t tkg:referenceKernel ?k . OPTIONAL { ?k tkg:kernelForm ?form }
             OPTIONAL { ?run tkg:verifies ?t ; tkg:passed ?passed ; prov:endedAtTime ?ended } }"""
    )
    latest: dict[str, tuple[datetime, str]] = {}
    status: dict[str, str] = {}
    for r in rows.records():
        t = r["t"]
        if r["form"] == "none":
            status[t] = "none"
            continue
        status.setdefault(t, "unverified")
        if r["ended"] is None:
            continue
        ended = datetime.fromisoformat(r["ended"])
        if t not in latest or ended > latest[t][0]:
            latest[t] = (ended, "verified" if r["passed"] else "failing")
    for t, (_, verdict) in latest.items():
        status[t] = verdict
    return status


def compare(store: GraphStore, techniques: list[NamedNode]) -> dict[str, Any]:
    """The side-by-side table of the comparison page, plus our additions."""
    cards = [technique_card(store, t) for t in techniques]
    columns = [c["name"] for c in cards]
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, values: list[Any]) -> None:
        rows.append((label, ["" if v is None else str(v) for v in values]))

    row("Category · date", [f"{c['categoryLabel']} · {c.get('date') or 'date unknown'}" for c in cards])
    row("First author / team", [
        " · ".join(x for x in (c.get("firstAuthor") or c.get("team"), c.get("organisations")) if x) for c in cards
    ])
    row("Headline result", [
        (c.get("headline") or "") + (" *" if c.get("conditional") else "") for c in cards
    ])
    for _key, _prop, label in DIMENSIONS:
        row(label, [dict(c["dimensions"]).get(label) or "not recorded" for c in cards])
    row("Evidence", [", ".join(_evidence(store, NamedNode(c["technique"]))) for c in cards])
    # Our additions: lineage between the compared techniques, kernels, reading.
    edges = lineage_edges(store)
    chosen = {c["technique"] for c in cards}
    relations = []
    for c in cards:
        rel = [f"{e.relation} {e.parent_name}" for e in edges if e.child == c["technique"] and e.parent in chosen]
        relations.append("; ".join(rel) or "—")
    row("Lineage between them", relations)
    row("Reference kernel", [c["kernel"] for c in cards])
    row("Reading", [_reading_summary(c["papers"]) for c in cards])
    conditions = [(c["name"], c["conditions"]) for c in cards if c.get("conditional") and c.get("conditions")]
    return {"columns": columns, "rows": rows, "conditions": conditions, "cards": cards}


def _evidence(store: GraphStore, technique: NamedNode) -> list[str]:
    rows = store.select(
        """SELECT ?t ?label ?url WHERE { ?t tkg:evidence ?e . ?e rdfs:label ?label ; schema:url ?url ;
             tkg:position ?p } ORDER BY ?p""",
        {"t": technique},
    )
    return [f"{r['label']}: {r['url']}" for r in rows.records()]


def _reading_summary(papers: list[dict[str, Any]]) -> str:
    listed = [p for p in papers if p.get("status")]
    if not listed:
        return "no paper on the reading list"
    read = sum(p["status"] == "read" for p in listed)
    return f"{read}/{len(listed)} read"


def stats(store: GraphStore) -> dict[str, Any]:
    """Counts for ``kg stats``: techniques, categories, papers, edges, reading progress, graphs."""
    one = store.select(
        """SELECT
             (COUNT(DISTINCT ?t) AS ?techniques) WHERE { ?t a tkg:Technique ; tkg:onComparisonPage true }"""
    ).records()[0]
    counts = {
        "techniques": one["techniques"],
        "lineage_only_parents": _count(store, "?t a tkg:Technique ; tkg:onComparisonPage false"),
        "categories": _count(store, "?t a tkg:TechniqueCategory"),
        "papers": _count(store, "?t a bibo:Document"),
        "lineage_edges": _count(store, "?t prov:qualifiedDerivation ?d"),
        "people": _count(store, "?t a foaf:Person"),
        "organisations": _count(store, "?t a foaf:Organization"),
        "repositories": _count(store, "?t a schema:SoftwareSourceCode"),
    }
    by_status = store.select(
        """SELECT ?slug (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p tkg:readingStatus ?s .
             BIND(REPLACE(STR(?s), "^.*/status/", "") AS ?slug) } GROUP BY ?slug ORDER BY ?slug"""
    ).records()
    per_category = store.select(
        """SELECT ?label (COUNT(DISTINCT ?t) AS ?n) WHERE { ?t a tkg:Technique ; tkg:onComparisonPage true ;
             skos:broader ?c . ?c skos:prefLabel ?label ; tkg:position ?pos . FILTER(LANG(?label) = "en") }
           GROUP BY ?label ?pos ORDER BY ?pos"""
    ).records()
    graphs = [
        {"graph": graph_name(g.graph), "triples": g.triples, "modified": g.modified, "by": g.activity}
        for g in store.graph_info()
    ]
    return {
        "counts": counts,
        "reading": {r["slug"]: r["n"] for r in by_status},
        "per_category": {r["label"]: r["n"] for r in per_category},
        "graphs": graphs,
        "triples": sum(g["triples"] for g in graphs),
    }


def _count(store: GraphStore, pattern: str) -> int:
    rows = store.select(f"SELECT (COUNT(DISTINCT ?t) AS ?n) WHERE {{ {pattern} }}")
    return int(python_value(rows.rows[0]["n"])) if rows.rows else 0
