"""GraphML for Gephi, yEd, Cytoscape and igraph, written by ``networkx.write_graphml``:
one ``<node>`` per technique (paper, repository) keyed by IRI, one ``<edge>`` per typed
relation, every attribute declared once with its type.

What TechKG adds before networkx writes the file is only clean data: an attribute that
holds values of two types is declared once (ints mixed with floats as doubles, anything
else mixed as strings), missing values (None) are left out rather than written as
"None", and characters XML 1.0 cannot carry are dropped.
"""

from __future__ import annotations

import io
from typing import Any

import networkx as nx

from exports.gexf import attribute_specs, xml_chars
from exports.lineage import Lineage

__all__ = ["NS", "render"]

NS = "http://graphml.graphdrawing.org/xmlns"


def _clean(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    types = {spec.name: spec.type for spec in attribute_specs(items)}
    return [{name: xml_chars(value) if isinstance(value := types[name](raw), str) else value
             for name, raw in data.items() if raw is not None} for data in items]


def render(lineage: Lineage) -> bytes:
    source = lineage.graph
    graph = nx.MultiDiGraph(**_clean([dict(source.graph)])[0])
    nodes = list(source.nodes(data=True))
    for (node, _), data in zip(nodes, _clean([dict(d) for _, d in nodes]), strict=True):
        graph.add_node(xml_chars(node), **data)
    edges = list(source.edges(keys=True, data=True))
    for (u, v, key, _), data in zip(edges, _clean([dict(d) for *_, d in edges]), strict=True):
        graph.add_edge(xml_chars(u), xml_chars(v), key=xml_chars(str(key)), **data)
    out = io.BytesIO()
    nx.write_graphml(graph, out, encoding="utf-8", prettyprint=True, named_key_ids=True)
    return out.getvalue().rstrip(b"\n") + b"\n"
