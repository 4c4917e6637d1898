"""The named graphs: each source writes its own, queries see their union.

A source's graph is replaced as a whole in one transaction (catalog, reading list,
arxiv, github, zotero, kernels) or changed by small atomic updates (reading state,
sync state). ``provenance`` describes every other graph: when and by what activity
it was last generated, and a hash of its content.
"""

from __future__ import annotations

from pyoxigraph import NamedNode

from kg.vocab import GRAPH_BASE

__all__ = [
    "ARXIV",
    "CATALOG",
    "GITHUB",
    "KERNELS",
    "ONTOLOGY",
    "PROVENANCE",
    "READING",
    "READING_LIST",
    "SOURCES",
    "ZOTERO",
    "ZOTERO_SYNC",
    "graph_iri",
    "graph_name",
]


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
KERNELS = graph_iri("kernels")
PROVENANCE = graph_iri("provenance")

#: Graphs written by TechKG itself, in load order.
SOURCES: dict[str, NamedNode] = {
    "ontology": ONTOLOGY,
    "catalog": CATALOG,
    "reading-list": READING_LIST,
    "reading": READING,
    "arxiv": ARXIV,
    "github": GITHUB,
    "zotero": ZOTERO,
    "zotero-sync": ZOTERO_SYNC,
    "kernels": KERNELS,
    "provenance": PROVENANCE,
}
