"""GEXF 1.3 for Gephi: typed node and edge attributes, each node's label, and the
category colour and a size (by how many techniques derive from it) as ``viz`` data
so that Gephi opens it coloured.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from exports.lineage import Lineage
from exports.style import category_palette
from exports.xmlgraph import AttributeSpec, attribute_specs, text_value, xml_chars

__all__ = ["NS", "VIZ", "render"]

NS = "http://gexf.net/1.3"
VIZ = "http://gexf.net/1.3/viz"
_TYPES = {bool: "boolean", int: "integer", float: "double", str: "string"}
_GREY = "#8c959f"


def _declare(graph: ET.Element, cls: str, specs: list[AttributeSpec]) -> None:
    attributes = ET.SubElement(graph, "attributes", {"class": cls, "mode": "static"})
    for spec in specs:
        ET.SubElement(attributes, "attribute", {"id": spec.name, "title": spec.name, "type": _TYPES[spec.type]})


def _values(element: ET.Element, specs: list[AttributeSpec], data: dict[str, object]) -> None:
    present = [s for s in specs if data.get(s.name) is not None]
    if present:
        values = ET.SubElement(element, "attvalues")
        for spec in present:
            ET.SubElement(values, "attvalue", {"for": spec.name, "value": text_value(data[spec.name], spec.type)})


def render(lineage: Lineage) -> bytes:
    graph = lineage.graph
    root = ET.Element("gexf", {"xmlns": NS, "xmlns:viz": VIZ, "version": "1.3"})
    meta = ET.SubElement(root, "meta")
    ET.SubElement(meta, "creator").text = "TechKG"
    ET.SubElement(meta, "description").text = xml_chars(str(graph.graph.get("name", "TechKG lineage")))
    body = ET.SubElement(root, "graph", {"defaultedgetype": "directed", "mode": "static", "idtype": "string"})
    node_specs = attribute_specs((d for _, d in graph.nodes(data=True)), skip=("label",))
    edge_specs = attribute_specs(d for _, _, d in graph.edges(data=True))
    _declare(body, "node", node_specs)
    _declare(body, "edge", edge_specs)
    positions = {c.id: c.position for c in lineage.categories}
    nodes = ET.SubElement(body, "nodes")
    for node, data in graph.nodes(data=True):
        element = ET.SubElement(nodes, "node", {"id": xml_chars(node), "label": xml_chars(str(data["label"]))})
        _values(element, node_specs, data)
        colour = category_palette(positions[data["category"]]).base if data.get("category") in positions else _GREY
        r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        ET.SubElement(element, "viz:color", {"r": str(r), "g": str(g), "b": str(b), "a": "1.0"})
        size = 10.0 + 4.0 * graph.out_degree(node) if data["kind"] == "technique" else 6.0
        ET.SubElement(element, "viz:size", {"value": repr(size)})
    edges = ET.SubElement(body, "edges")
    for number, (source, target, _key, data) in enumerate(graph.edges(keys=True, data=True)):
        element = ET.SubElement(edges, "edge", {"id": f"e{number}", "source": xml_chars(source),
                                                "target": xml_chars(target),
                                                "label": xml_chars(str(data["relation"]))})
        _values(element, edge_specs, data)
    ET.indent(root, space="  ")
    out = io.BytesIO()
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
    return out.getvalue() + b"\n"
