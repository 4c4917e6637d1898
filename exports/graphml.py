"""GraphML for Gephi, yEd, Cytoscape and igraph: typed ``<key>`` declarations, one
``<node>`` per technique (paper, repository) keyed by IRI, one ``<edge>`` per typed
relation with its ``relation`` as data.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from exports.lineage import Lineage
from exports.xmlgraph import AttributeSpec, attribute_specs, text_value, xml_chars

__all__ = ["NS", "render"]

NS = "http://graphml.graphdrawing.org/xmlns"
_TYPES = {bool: "boolean", int: "int", float: "double", str: "string"}


def _keys(parent: ET.Element, domain: str, specs: list[AttributeSpec], prefix: str) -> dict[str, str]:
    ids = {}
    for spec in specs:
        key_id = f"{prefix}_{spec.name}"
        ET.SubElement(parent, "key", {"id": key_id, "for": domain, "attr.name": spec.name,
                                      "attr.type": _TYPES[spec.type]})
        ids[spec.name] = key_id
    return ids


def render(lineage: Lineage) -> bytes:
    graph = lineage.graph
    root = ET.Element("graphml", {
        "xmlns": NS,
        "xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance",
        "xsi:schemaLocation": f"{NS} {NS}/1.0/graphml.xsd",
    })
    graph_specs = attribute_specs([graph.graph])
    node_specs = attribute_specs(d for _, d in graph.nodes(data=True))
    edge_specs = attribute_specs(d for _, _, d in graph.edges(data=True))
    graph_keys = _keys(root, "graph", graph_specs, "g")
    node_keys = _keys(root, "node", node_specs, "n")
    edge_keys = _keys(root, "edge", edge_specs, "e")
    body = ET.SubElement(root, "graph", {"id": "lineage", "edgedefault": "directed"})
    for spec in graph_specs:
        ET.SubElement(body, "data", {"key": graph_keys[spec.name]}).text = text_value(graph.graph[spec.name], spec.type)
    for node, data in graph.nodes(data=True):
        element = ET.SubElement(body, "node", {"id": xml_chars(node)})
        for spec in node_specs:
            if data.get(spec.name) is not None:
                value = text_value(data[spec.name], spec.type)
                ET.SubElement(element, "data", {"key": node_keys[spec.name]}).text = value
    for number, (source, target, _key, data) in enumerate(graph.edges(keys=True, data=True)):
        element = ET.SubElement(body, "edge", {"id": f"e{number}", "source": xml_chars(source),
                                               "target": xml_chars(target)})
        for spec in edge_specs:
            if data.get(spec.name) is not None:
                value = text_value(data[spec.name], spec.type)
                ET.SubElement(element, "data", {"key": edge_keys[spec.name]}).text = value
    ET.indent(root, space="  ")
    out = io.BytesIO()
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
    return out.getvalue() + b"\n"
