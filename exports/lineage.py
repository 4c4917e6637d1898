"""The lineage graph every lineage export starts from: techniques, typed relations and,
optionally, the papers and repositories behind them, as a networkx ``MultiDiGraph``.

Nodes are keyed by IRI and carry scalar attributes only (so GraphML and GEXF can
type them); edges point from a parent to what derives from it and carry the typed
``relation``. What does not fit in a scalar (the papers of each technique, the
categories in page order) travels beside the graph in :class:`Lineage`.

A technique the reader added (``kg technique add``) carries ``mine``, and every format
marks it "yours". Reading status is private: the ``reading_*`` counts on techniques and ``status`` on
papers are only filled in when ``include_private`` is set.

Edges a reader accepted from ``kg suggest lineage`` are lineage edges like the others,
with ``basis`` ``accepted`` and their evidence in ``note``. With ``with_citations`` each
lineage edge also says whether the citations confirm it (``citations``: confirmed,
background (cited for background only) or lacking, with the strongest ``evidence``
sentence and its ``score``), and the pending suggestions come as edges of kind
``suggested`` (their proposed ``relation``, ``score``, ``suggestion`` id and ``evidence``),
which the formats draw dashed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from pyoxigraph import NamedNode

import kg.answer
from kg.errors import ExportError
from kg.iris import paper_link
from kg.resolve import Resolver, resolve_technique
from kg.results import Solutions
from kg.store.base import GraphStore
from kg.views import kernel_status
from kg.vocab import LINEAGE_RELATIONS

__all__ = [
    "CLUSTER_PREFIX",
    "DIRECTIONS",
    "READING_COUNTS",
    "Category",
    "Lineage",
    "LineageOptions",
    "PaperRef",
    "build_lineage",
    "DETAIL_LIMIT",
    "PAPERS_PER_TECHNIQUE",
]

DIRECTIONS = ("up", "down", "both")
#: Node keys of the clusters of a clustered lineage (``cluster:`` + the anchor's IRI).
CLUSTER_PREFIX = "cluster:"
#: A clustered lineage folds the techniques from outside the catalog when there are more than this.
FOLD_ABOVE = 300

#: Node attributes holding reading-status counts (private: filled only on request).
READING_COUNTS: dict[str, str] = {
    "read": "reading_read",
    "reading": "reading_reading",
    "to-read": "reading_to_read",
    "skipped": "reading_skipped",
}
_OTHER_STATUS = "reading_other"
#: Above this many paper links in a selection, only the first papers of each technique are
#: read in detail (the counts stay exact).
DETAIL_LIMIT = 5000
PAPERS_PER_TECHNIQUE = 50


@dataclass(frozen=True)
class LineageOptions:
    """What to put in a lineage export.

    ``root`` limits the graph to one technique's ancestors (``up``), descendants
    (``down``) or both, at most ``depth`` steps away; ``categories`` keeps only
    techniques of those categories (the root always stays).
    """

    root: str | None = None
    direction: str = "both"
    depth: int = 10
    categories: tuple[str, ...] = ()
    with_papers: bool = False
    with_repositories: bool = False
    include_private: bool = False
    #: With ``include_private``, read each paper's reading status and each technique's
    #: reading counts. False for a caller that reads the statuses of the papers it shows
    #: itself and shows no counts (the workbench's Lineage page): on a large store, joining
    #: the statuses takes most of the time of a lineage around a technique.
    with_statuses: bool = True
    with_citations: bool = False
    #: Without a root, and when more than :data:`FOLD_ABOVE` techniques come from outside
    #: the catalog, keep the catalog's techniques and fold every other one into a
    #: ``cluster`` node under its nearest catalog ancestor (counted there): the view of a
    #: store that holds thousands of techniques. A user's few own techniques stay in view.
    clustered: bool = False
    #: Read at most this many papers of each technique in detail (those that introduced
    #: it first); the counts stay exact. None: all of them, up to :data:`DETAIL_LIMIT` links.
    papers_per_technique: int | None = None
    #: With a root, show at most this many of its descendants, the nearest first; each one
    #: further away is folded into a ``cluster`` node under its nearest shown ancestor
    #: (counted there), which opens as that technique's own lineage. None: every one.
    limit: int | None = None


@dataclass(frozen=True)
class Category:
    iri: str
    id: str
    label: str
    position: int


@dataclass(frozen=True)
class PaperRef:
    """A paper as the card of a technique shows it."""

    iri: str
    role: str
    title: str
    arxiv: str | None = None
    doi: str | None = None
    url: str | None = None
    issued: str | None = None
    venue: str | None = None
    status: str | None = None

    @property
    def link(self) -> str:
        """Where a reader opens it: arXiv, DOI, a page, or the IRI itself."""
        return paper_link(self.arxiv, self.doi, self.url or self.iri)


@dataclass
class Lineage:
    """The graph plus what travels beside it."""

    graph: nx.MultiDiGraph
    options: LineageOptions
    categories: list[Category] = field(default_factory=list)
    papers: dict[str, list[PaperRef]] = field(default_factory=dict)
    summaries: dict[str, str] = field(default_factory=dict)
    #: The store it was read from, for exports that describe its nodes in RDF.
    store: GraphStore | None = field(default=None, repr=False)

    def techniques(self) -> list[str]:
        """Technique IRIs in page order (category position, then name)."""
        return [n for n, d in self.graph.nodes(data=True) if d["kind"] == "technique"]

    def lineage_edges(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        return [(u, v, k, d) for u, v, k, d in self.graph.edges(keys=True, data=True) if d["kind"] == "lineage"]

    def category_of(self, node: str) -> Category | None:
        cid = self.graph.nodes[node].get("category")
        return next((c for c in self.categories if c.id == cid), None)


def _records(result: object) -> list[dict[str, Any]]:
    assert isinstance(result, Solutions)
    return result.records()


def _scalar(attrs: dict[str, Any]) -> dict[str, Any]:
    """Drop unknown values: GraphML and GEXF have no null, an absent key means unknown."""
    return {k: v for k, v in attrs.items() if v is not None and v != ""}


def build_lineage(store: GraphStore, options: LineageOptions | None = None) -> Lineage:
    """Read the lineage graph from ``store`` through the named queries.

    Raises NotFoundError for an unknown root or category, ExportError for bad options.
    """
    options = options or LineageOptions()
    if options.direction not in DIRECTIONS:
        raise ExportError(f"unknown direction {options.direction!r}",
                          hint="Use --direction up (ancestors), down (descendants) or both.")
    if options.depth < 1:
        raise ExportError(f"--depth must be at least 1, not {options.depth}",
                          hint="Give the number of lineage steps to follow, e.g. --depth 2.")

    # The techniques and their edges first, in two light queries; then only the techniques
    # the options keep are read in full (a store with thousands of synthetic techniques
    # shows a few dozen of them clustered, or one technique's neighbourhood).
    skeleton = _skeleton(store)
    root = resolve_technique(store, options.root).value if options.root else None
    if root is not None and root not in skeleton:
        raise ExportError(f"{options.root!r} is not a technique of the lineage graph",
                          hint="Pick a technique listed by: kg stats --techniques")
    keep = _reach(skeleton, options, root)
    rows: list[dict[str, Any]] | None = None
    if options.categories:  # every technique's category, before the fold
        rows = kg.answer.records(store, "lineage-nodes")
        keep = _in_categories(store, rows, keep, options, root)
    folded: dict[str, int] = {}
    if options.clustered and root is None:
        keep, folded = _fold(store, skeleton, keep)
    elif root is not None and options.limit is not None:
        keep, folded = _nearest(skeleton, keep, root, options.limit)
    if rows is None:
        rows = _node_rows(store, keep, len(skeleton))
    narrowed = len(keep) < len(skeleton) // 2

    kernels = kernel_status(store, sorted(map(NamedNode, keep)) if narrowed else None)
    graph = nx.MultiDiGraph(name="TechKG lineage")
    categories: dict[str, Category] = {}
    summaries: dict[str, str] = {}
    repositories: dict[str, dict[str, Any]] = {}
    for row in rows:
        iri = row["technique"]
        if iri in graph or iri not in keep:
            continue
        categories.setdefault(row["categoryId"], Category(row["category"], row["categoryId"],
                                                          row["categoryLabel"], int(row["categoryPosition"])))
        graph.add_node(iri, **_scalar({
            "kind": "technique",
            "label": row["name"],
            "name": row["name"],
            "name_zh": row["nameZh"],
            "aliases": row["aliases"],
            "slug": row["id"],
            "category": row["categoryId"],
            "category_label": row["categoryLabel"],
            "on_page": bool(row["onPage"]),
            # one of the reader's own (kg technique add): every format marks it as theirs
            "mine": bool(row["addedBy"]),
            "date": str(row["date"]) if row["date"] is not None else None,
            "people": row["people"],
            "organisation": row["organisations"],
            "headline": row["headline"],
            "headline_conditional": bool(row["conditional"]) if row["conditional"] is not None else None,
            "kernel": kernels.get(iri, "not run"),
            "repository": row["repository"],
            "papers": 0,
        }))
        if row["summary"]:
            summaries[iri] = row["summary"]
        if row["repository"]:
            repositories[row["repository"]] = {"technique": iri, "stars": row["stars"]}

    relations = kg.answer.records(store, "lineage-relations", {"child": sorted(graph)} if narrowed else None)
    for edge in relations:
        if edge["parent"] in graph and edge["child"] in graph:
            graph.add_edge(edge["parent"], edge["child"], key=edge["relation"], **_scalar({
                "kind": "lineage", "relation": edge["relation"], "basis": edge["basis"], "note": edge["note"],
            }))

    reading = options.include_private and options.with_statuses
    papers, totals, statuses = _papers(store, graph, with_statuses=reading,
                                       per_technique=options.papers_per_technique)
    for refs in papers.values():
        refs.sort(key=lambda p: (p.role != "introduces", p.title.casefold()))
    for technique in graph:
        graph.nodes[technique]["papers"] = totals.get(technique, 0)
        if reading:
            counts = Counter(statuses.get(technique, []))
            for status, attr in READING_COUNTS.items():
                graph.nodes[technique][attr] = counts.pop(status, 0)
            graph.nodes[technique][_OTHER_STATUS] = sum(counts.values())

    for anchor, count in folded.items():
        node = CLUSTER_PREFIX + anchor
        graph.add_node(node, kind="cluster", label=f"{count:,} derived technique{'s' if count != 1 else ''}",
                       count=count, anchor=anchor)
        graph.add_edge(anchor, node, key="cluster", kind="cluster")

    if options.with_citations:
        _add_citations(store, graph)
    if options.with_papers:
        _add_papers(graph, papers)
    if options.with_repositories:
        _add_repositories(graph, repositories)

    used = {graph.nodes[n]["category"] for n in graph if graph.nodes[n]["kind"] == "technique"}
    ordered = sorted((c for c in categories.values() if c.id in used), key=lambda c: c.position)
    graph.graph.update(_scalar({
        "root": root,
        "direction": options.direction if options.root else None,
        "depth": options.depth if options.root else None,
        "private": options.include_private,
    }))
    return Lineage(graph, options, ordered, papers, {k: v for k, v in summaries.items() if k in graph}, store)


#: Every technique and every typed lineage edge: what the options choose the techniques from.
_SKELETON_TECHNIQUES = "SELECT ?t WHERE { ?t a tkg:Technique }"
_SKELETON_EDGES = ("SELECT DISTINCT ?child ?parent WHERE { VALUES ?rel { "
                   + " ".join(f"tkg:{name}" for name in LINEAGE_RELATIONS) + " } ?child ?rel ?parent }")


def _skeleton(store: GraphStore) -> nx.DiGraph:
    """Every technique (a node) and lineage edge (parent → child), nothing else."""
    skeleton = nx.DiGraph()
    skeleton.add_nodes_from(row["t"].value for row in store.select(_SKELETON_TECHNIQUES))  # type: ignore[union-attr]
    for row in store.select(_SKELETON_EDGES):
        parent, child = row["parent"].value, row["child"].value  # type: ignore[union-attr]
        if parent in skeleton and child in skeleton:
            skeleton.add_edge(parent, child)
    return skeleton


def _node_rows(store: GraphStore, keep: set[str], everything: int) -> list[dict[str, Any]]:
    """The lineage-nodes rows of ``keep``: bound to them when they are a small part of the
    ``everything`` techniques (each bound technique is a few lookups), else all rows."""
    if len(keep) < everything // 2:
        return kg.answer.records(store, "lineage-nodes", {"technique": sorted(keep)}) if keep else []
    return kg.answer.records(store, "lineage-nodes")


def _reach(skeleton: nx.DiGraph, options: LineageOptions, root: str | None) -> set[str]:
    """The techniques within ``options.depth`` steps of ``root`` (every one without a root)."""
    if root is None:
        return set(skeleton)
    keep = {root}
    if options.direction in ("up", "both"):
        keep |= _within(skeleton.reverse(copy=False), root, options.depth)
    if options.direction in ("down", "both"):
        keep |= _within(skeleton, root, options.depth)
    return keep


def _in_categories(store: GraphStore, rows: list[dict[str, Any]], keep: set[str], options: LineageOptions,
                   root: str | None) -> set[str]:
    """The techniques of ``keep`` in the options' categories (the root always stays)."""
    by_iri = {row["category"]: row["categoryId"] for row in rows}
    resolve = Resolver(store)
    wanted: set[str] = set()
    for name in options.categories:
        iri = resolve("category", name).value
        if iri not in by_iri:
            raise ExportError(f"category {name!r} holds no technique",
                              hint="Categories with techniques: " + ", ".join(sorted(set(by_iri.values()))))
        wanted.add(by_iri[iri])
    return {row["technique"] for row in rows
            if row["technique"] in keep and (row["categoryId"] in wanted or row["technique"] == root)}


#: lineage-paper-links for a few techniques (VALUES-bound), the statuses left out unless
#: wanted ($STATUS): Oxigraph joins them by reading every status of the store.
_FEW = 300
_LINKS_OF_FEW = """SELECT DISTINCT ?technique ?paper ?role ?status WHERE {
  { ?technique tkg:primaryPaper ?paper . BIND("introduces" AS ?role) }
  UNION { ?paper ?relation ?technique .
          VALUES (?relation ?role) { (tkg:introducesTechnique "introduces") (tkg:extendsTechnique "extends")
                                     (tkg:usesTechnique "uses") (tkg:evaluatesTechnique "evaluates") } }
  $STATUS }"""
_LINK_STATUS = "OPTIONAL { ?paper tkg:readingStatus ?status }"


#: What a card shows of each paper, asked once per paper (not once per paper and technique);
#: its status only where wanted ($STATUS), as above.
_PAPER_CARDS = """SELECT ?paper (SAMPLE(?t) AS ?title) (SAMPLE(?a) AS ?arxivId) (SAMPLE(?d) AS ?doi)
       (SAMPLE(?u) AS ?url) (SAMPLE(?i) AS ?issued) (MIN(STR(?v)) AS ?venue) (SAMPLE(?s) AS ?status)
WHERE {
  OPTIONAL { ?paper dcterms:title ?t }
  OPTIONAL { ?paper tkg:arxivId ?a }
  OPTIONAL { ?paper bibo:doi ?d }
  OPTIONAL { ?paper foaf:page ?u }
  OPTIONAL { ?paper dcterms:issued ?i }
  OPTIONAL { ?paper tkg:venue ?v }
  $STATUS
}
GROUP BY ?paper"""
_CARD_STATUS = 'OPTIONAL { ?paper tkg:readingStatus ?st . BIND(REPLACE(STR(?st), "^.*/status/", "") AS ?s) }'
_CARDS_AT_ONCE = 2000


def _papers(store: GraphStore, graph: nx.MultiDiGraph, *, with_statuses: bool, per_technique: int | None = None,
            ) -> tuple[dict[str, list[PaperRef]], dict[str, int], dict[str, list[str]]]:
    """Each technique's papers (all of them, or the first ``per_technique``, or the first
    :data:`PAPERS_PER_TECHNIQUE` when the store links more than :data:`DETAIL_LIMIT` papers
    to the selection), how many papers each has, and the reading statuses of all of them."""
    links: dict[str, list[tuple[str, str]]] = {}
    totals: Counter[str] = Counter()
    statuses: dict[str, list[str]] = {}
    techniques = sorted(n for n in graph if graph.nodes[n]["kind"] == "technique")
    if len(techniques) <= _FEW:
        links_of_few = _LINKS_OF_FEW.replace("$STATUS", _LINK_STATUS if with_statuses else "")
        link_rows = store.select(links_of_few, {"technique": list(map(NamedNode, techniques))}).records()
    else:
        link_rows = kg.answer.records(store, "lineage-paper-links", {"technique": techniques})
    for row in link_rows:
        technique = row["technique"]
        if technique not in graph:
            continue
        paper, role = row["paper"], row["role"]
        totals[technique] += 1
        links.setdefault(technique, []).append((role, paper))
        status = row.get("status")
        if with_statuses and status is not None:
            statuses.setdefault(technique, []).append(str(status).rsplit("/status/", 1)[-1])
    if per_technique is None and sum(totals.values()) > DETAIL_LIMIT:
        per_technique = PAPERS_PER_TECHNIQUE
    if per_technique is not None:
        for items in links.values():
            items.sort(key=lambda item: (item[0] != "introduces", item[1]))
            del items[per_technique:]
    wanted = sorted({paper for items in links.values() for _, paper in items})
    cards: dict[str, dict[str, Any]] = {}
    paper_cards = _PAPER_CARDS.replace("$STATUS", _CARD_STATUS if with_statuses else "")
    for start in range(0, len(wanted), _CARDS_AT_ONCE):
        chunk = [NamedNode(paper) for paper in wanted[start:start + _CARDS_AT_ONCE]]
        cards.update((row["paper"], row) for row in store.select(paper_cards, {"paper": chunk}).records())
    papers: dict[str, list[PaperRef]] = {}
    for technique, items in links.items():
        for role, paper in items:
            card = cards.get(paper, {})
            papers.setdefault(technique, []).append(PaperRef(
                iri=paper, role=role, title=card.get("title") or paper, arxiv=card.get("arxivId"),
                doi=card.get("doi"), url=card.get("url"),
                issued=str(card["issued"]) if card.get("issued") is not None else None,
                venue=card.get("venue"), status=card.get("status") if with_statuses else None,
            ))
    return papers, dict(totals), statuses


def _fold(store: GraphStore, graph: nx.DiGraph, keep: set[str]) -> tuple[set[str], dict[str, int]]:
    """The catalog's techniques among ``keep``, and for each, how many of the others derive
    from it with no catalog technique between (their nearest catalog ancestor); ``keep``
    as it is when no more than :data:`FOLD_ABOVE` are others."""
    from kg.graphs import CATALOG

    rows = store.select(f"SELECT ?t WHERE {{ GRAPH {CATALOG} {{ ?t a tkg:Technique }} }}")
    catalog = {row["t"].value for row in rows} & keep  # type: ignore[union-attr]
    if len(keep - catalog) <= FOLD_ABOVE:
        return keep, {}
    folded: Counter[str] = Counter()
    for node in keep - catalog:
        anchor = _nearest_ancestor(graph, node, lambda parent: parent in catalog)
        if anchor is not None:
            folded[anchor] += 1
    return catalog, dict(folded)


def _nearest_ancestor(graph: nx.DiGraph, node: str, anchors: Callable[[str], bool],
                      passes: Callable[[str], bool] = lambda _parent: True) -> str | None:
    """The nearest ancestor of ``node`` that ``anchors`` accepts (breadth first, parents in
    IRI order), going up only through the ancestors that ``passes`` accepts."""
    seen, frontier = {node}, [node]
    while frontier:
        following = []
        for current in frontier:
            for parent in sorted(graph.predecessors(current)):
                if anchors(parent):
                    return str(parent)
                if passes(parent) and parent not in seen:
                    seen.add(parent)
                    following.append(parent)
        frontier = following
    return None


def _nearest(graph: nx.DiGraph, keep: set[str], root: str, limit: int) -> tuple[set[str], dict[str, int]]:
    """``keep`` with at most ``limit`` of ``root``'s descendants (breadth first, in IRI order
    within a step), and for each shown technique, how many of the others have it as their
    nearest shown ancestor; the root's ancestors all stay (a technique has a few)."""
    below = keep & (nx.descendants(graph, root) - nx.ancestors(graph, root))
    if len(below) <= limit:
        return keep, {}
    shown: set[str] = set()
    level = [root]
    while level and len(shown) < limit:
        following = sorted({c for node in level for c in graph.successors(node) if c in below and c not in shown})
        level = following[:limit - len(shown)]
        shown.update(level)
    shown |= keep - below
    folded: Counter[str] = Counter()
    for node in below - shown:  # under its nearest shown ancestor below the root (or the root)
        anchor = _nearest_ancestor(graph, node, lambda parent: parent in shown and (parent in below or parent == root),
                                   lambda parent: parent in below)
        if anchor is not None:
            folded[anchor] += 1
    return shown, dict(folded)


def _within(graph: nx.MultiDiGraph, start: str, depth: int) -> set[str]:
    lengths = nx.single_source_shortest_path_length(graph, start, cutoff=depth)
    return set(lengths)


def _add_citations(store: GraphStore, graph: nx.MultiDiGraph) -> None:
    """Citation evidence on the lineage edges, and the pending suggestions as dashed edges;
    nothing before ``kg ingest citations`` has written any."""
    from kg.citations import has_citations
    from kg.suggestions import lineage_report

    if not has_citations(store):
        return
    report = lineage_report(store)
    for item in report.existing:
        parent, child = item.parent.iri, item.child.iri
        for data in (graph.get_edge_data(parent, child) or {}).values():
            if data["kind"] == "lineage":
                data["citations"] = item.status
                data.update(_scalar({"score": round(item.score, 3) if item.score else None,
                                     "evidence": item.evidence[0].line() if item.evidence else None}))
    for item in report.suggestions:
        parent, child = item.parent.iri, item.child.iri
        if parent in graph and child in graph:
            graph.add_edge(parent, child, key="suggested", **_scalar({
                "kind": "suggested", "relation": item.relation, "score": round(item.score, 3),
                "suggestion": item.id, "evidence": item.evidence[0].line() if item.evidence else None,
                "note": f"suggested from citations (score {item.score:.2f}); accept it with kg suggest accept "
                        f"{item.id}"}))


def _add_papers(graph: nx.MultiDiGraph, papers: dict[str, list[PaperRef]]) -> None:
    for technique, refs in papers.items():
        for ref in refs:
            if ref.iri not in graph:
                graph.add_node(ref.iri, **_scalar({
                    "kind": "paper", "label": ref.title, "title": ref.title, "arxiv": ref.arxiv,
                    "doi": ref.doi, "url": ref.link, "date": ref.issued, "venue": ref.venue,
                    "status": ref.status,
                }))
            graph.add_edge(ref.iri, technique, key=ref.role, kind="paper", relation=ref.role)


def _add_repositories(graph: nx.MultiDiGraph, repositories: dict[str, dict[str, Any]]) -> None:
    for repo, info in repositories.items():
        if info["technique"] not in graph:
            continue
        if repo not in graph:
            name = repo.split("://", 1)[-1].split("/", 1)[-1]
            graph.add_node(repo, **_scalar({"kind": "repository", "label": name, "name": name, "url": repo,
                                            "stars": info["stars"]}))
        graph.add_edge(info["technique"], repo, key="code", kind="code", relation="code")

