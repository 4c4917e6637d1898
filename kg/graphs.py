"""The named graphs: each has an owner, each source writes its own, queries see their union.

Every named graph has one of three kinds of owner (:class:`GraphKind`):

- ``package``: built from TechKG's own files (ontology, catalog); ``kg build`` rewrites them.
- ``user``: the user's own state (reading state and notes, their reading list, the Zotero
  sync state, lineage and link decisions, the papers rejected from the reading suggestions,
  what is new's state, their own techniques and their facts on catalog techniques
  (``my-techniques``), the techniques they follow (``follows``)). No command replaces or
  drops one of these without asking, and every command that does replace one keeps a
  snapshot first.
- ``source``: refreshed from a source (arxiv, github, zotero, citations, kernels, and
  ``import/<name>`` graphs loaded by ``kg import rdf``); a refresh replaces it whole.
  ``links`` is derived the same way: ``kg link`` makes it again from the other graphs.

``provenance`` describes every other graph: when and by what activity it was last
generated, and a hash of its content. It is kept by TechKG itself.
"""

from __future__ import annotations

from enum import StrEnum

from pyoxigraph import NamedNode

from kg.vocab import GRAPH_BASE

__all__ = [
    "ARXIV",
    "CATALOG",
    "FOLLOWS",
    "CITATIONS",
    "GITHUB",
    "IMPORT_PREFIX",
    "KERNELS",
    "LINEAGE_DECISIONS",
    "MY_TECHNIQUES",
    "LINKS",
    "LINK_DECISIONS",
    "NEWS",
    "ONTOLOGY",
    "OVERRIDING",
    "OWNERS",
    "PROVENANCE",
    "READING",
    "READING_DECISIONS",
    "READING_LIST",
    "SOURCES",
    "USER_GRAPHS",
    "ZOTERO",
    "ZOTERO_SYNC",
    "GraphKind",
    "graph_iri",
    "graph_kind",
    "graph_name",
    "is_import_graph",
    "is_own_graph",
    "own_first",
]


class GraphKind(StrEnum):
    """Who owns a named graph, and so who may replace it."""

    package = "package"  # built from the package: ontology, catalog
    user = "user"  # the user's own state: never replaced without asking
    source = "source"  # refreshed from a source: arxiv, github, zotero, citations, imports; derived: links
    internal = "internal"  # TechKG's own bookkeeping: provenance


def graph_iri(name: str) -> NamedNode:
    """The IRI of the named graph of source ``name``; an absolute IRI passes through."""
    if name.startswith(("http://", "https://", "urn:")):
        return NamedNode(name)
    return NamedNode(GRAPH_BASE + name)


def graph_name(graph: NamedNode) -> str:
    """The short name of one of our graphs, or the full IRI of anyone else's."""
    return graph.value.removeprefix(GRAPH_BASE)


ONTOLOGY = graph_iri("ontology")
CATALOG = graph_iri("catalog")
READING_LIST = graph_iri("reading-list")
READING = graph_iri("reading")
ARXIV = graph_iri("arxiv")
GITHUB = graph_iri("github")
ZOTERO = graph_iri("zotero")
ZOTERO_SYNC = graph_iri("zotero-sync")
CITATIONS = graph_iri("citations")
LINEAGE_DECISIONS = graph_iri("lineage-decisions")
#: Papers the reader rejected from kg suggest reading (never suggested again).
READING_DECISIONS = graph_iri("reading-decisions")
#: When the reader last looked at what is new (kg news), and the papers they marked seen.
NEWS = graph_iri("news")
#: The reader's own techniques, and their facts on the catalog's (kg technique add/edit).
MY_TECHNIQUES = graph_iri("my-techniques")
#: The techniques the reader follows (kg follow).
FOLLOWS = graph_iri("follows")
KERNELS = graph_iri("kernels")
#: The paper-technique links kg link derives (kg/linking), and the reader's verdicts on them.
LINKS = graph_iri("links")
LINK_DECISIONS = graph_iri("link-decisions")
PROVENANCE = graph_iri("provenance")

#: ``kg import rdf`` loads into ``import/<name>`` graphs.
IMPORT_PREFIX = GRAPH_BASE + "import/"

#: Graphs written by TechKG itself, in load order.
SOURCES: dict[str, NamedNode] = {
    "ontology": ONTOLOGY,
    "catalog": CATALOG,
    "reading-list": READING_LIST,
    "reading": READING,
    "lineage-decisions": LINEAGE_DECISIONS,
    "reading-decisions": READING_DECISIONS,
    "news": NEWS,
    "my-techniques": MY_TECHNIQUES,
    "follows": FOLLOWS,
    "link-decisions": LINK_DECISIONS,
    "arxiv": ARXIV,
    "github": GITHUB,
    "zotero": ZOTERO,
    "zotero-sync": ZOTERO_SYNC,
    "citations": CITATIONS,
    "kernels": KERNELS,
    "links": LINKS,
    "provenance": PROVENANCE,
}

#: The owner of each of TechKG's own graphs (``import/<name>`` graphs are ``source``).
OWNERS: dict[NamedNode, GraphKind] = {
    ONTOLOGY: GraphKind.package,
    CATALOG: GraphKind.package,
    READING_LIST: GraphKind.user,
    READING: GraphKind.user,
    ZOTERO_SYNC: GraphKind.user,
    LINEAGE_DECISIONS: GraphKind.user,
    READING_DECISIONS: GraphKind.user,
    NEWS: GraphKind.user,
    MY_TECHNIQUES: GraphKind.user,
    FOLLOWS: GraphKind.user,
    LINK_DECISIONS: GraphKind.user,
    ARXIV: GraphKind.source,
    GITHUB: GraphKind.source,
    ZOTERO: GraphKind.source,
    CITATIONS: GraphKind.source,
    KERNELS: GraphKind.source,
    LINKS: GraphKind.source,
    PROVENANCE: GraphKind.internal,
}

#: The graphs that hold the user's own state.
USER_GRAPHS: tuple[NamedNode, ...] = tuple(g for g, kind in OWNERS.items() if kind is GraphKind.user)

#: Graphs whose value of a single-valued fact (a technique's date, a comparison dimension)
#: replaces the value other graphs give: the reader's own word beats the catalog's. Every
#: view follows this rule: the SPARQL of the views filters the other values out
#: (:data:`kg.owntech.overrides.PREFER_MINE`), and analytics ranks these graphs first.
OVERRIDING: tuple[NamedNode, ...] = (MY_TECHNIQUES,)


def own_first(subject: str, key: str, value: str, mine: str) -> str:
    """SPARQL that drops the ``subject``'s ``tkg:<key>`` ``value`` (a variable or a term, bound
    before it) where the reading graph states another value for it; ``mine`` is a variable
    name of its own.

    This is the rule for a paper's reading state (``readingStatus``, ``statusChangedAt``):
    the reader's own where they set one (the reading graph's), over what another graph
    states (an import's); where they set none, every graph's counts. The named queries
    write the same pattern, the analytics tables ``kg.analytics.twins.own_first`` and the
    reading graph's priority.

    For a required pattern: a MINUS of the few values the reader's replace, not a join of
    the reading graph's values (reading-progress at 700k papers: +0.2 s that way, nothing
    this way), and not a sub-select, which a page's ``VALUES`` block would open
    (read-without-note's page: +0.1 s). In an ``OPTIONAL`` block a named query asks ``FILTER NOT EXISTS`` of each
    row instead: a MINUS there is made again for each row (a page of reading-queue: 0.35 s
    against 0.01 s)."""
    reading = f"GRAPH <{READING.value}> {{ {subject} tkg:{key} ?{mine} }}"
    if not value.startswith("?"):
        return f"MINUS {{ {reading} FILTER(?{mine} != {value}) }}"
    return f"MINUS {{ {reading} {subject} tkg:{key} {value} FILTER({value} != ?{mine}) }}"


def is_import_graph(graph: NamedNode) -> bool:
    """Whether ``graph`` is an ``import/<name>`` graph of ``kg import rdf``."""
    return graph.value.startswith(IMPORT_PREFIX) and len(graph.value) > len(IMPORT_PREFIX)


def is_own_graph(graph: NamedNode) -> bool:
    """Whether ``graph`` is one of TechKG's graphs (its own or an import), as opposed to a
    graph that some triplestore server keeps for itself (Virtuoso's system graphs, say)."""
    return graph in OWNERS or is_import_graph(graph)


def graph_kind(graph: NamedNode) -> GraphKind | None:
    """The owner kind of one of TechKG's graphs; None for a graph TechKG does not own."""
    if graph in OWNERS:
        return OWNERS[graph]
    return GraphKind.source if is_import_graph(graph) else None
