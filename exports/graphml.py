"""GraphML for Gephi, yEd, Cytoscape, igraph and graphology, written by
``networkx.write_graphml``: one ``<node>`` per technique (paper, repository) keyed by IRI,
one ``<edge>`` per typed relation, every attribute declared once with its type.

Every edge has an id of its own (``e0``, ``e1``, ... in a stable order) and its relation
as the ``relation`` data key: readers that merge edges by id (graphology) would otherwise
take two ``extends`` edges for one. Keys get the generic ids ``d0``, ``d1``, ... with the
attribute's name in ``attr.name``, since a node and an edge attribute may share a name
(``kind``) and a key id must be unique in the file.

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
    edges = sorted(source.edges(keys=True, data=True), key=lambda e: (str(e[0]), str(e[1]), str(e[2])))
    for index, ((u, v, key, _), data) in enumerate(zip(edges, _clean([dict(d) for *_, d in edges]), strict=True)):
        data.setdefault("relation", xml_chars(str(key)))
        graph.add_edge(xml_chars(u), xml_chars(v), key=f"e{index}", **data)
    out = io.BytesIO()
    nx.write_graphml(graph, out, encoding="utf-8", prettyprint=True, named_key_ids=False)
    return out.getvalue().rstrip(b"\n") + b"\n"
