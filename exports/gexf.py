"""GEXF 1.3 for Gephi: typed node and edge attributes, each node's label, and the
category colour and a size (by how many techniques derive from it) as ``viz`` data
so that Gephi opens it coloured.

TechKG writes GEXF itself because networkx's ``write_gexf`` writes only the 1.1 and 1.2
drafts of the format, not 1.3 (GraphML, which networkx writes well, goes through it:
see :mod:`exports.graphml`). Attributes are declared once with a type, in the lineage
graph's own order, so the same graph always gives the same file.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any

from exports.lineage import Lineage
from exports.style import category_palette

__all__ = ["NS", "VIZ", "AttributeSpec", "attribute_specs", "render", "text_value", "xml_chars"]

NS = "http://gexf.net/1.3"
VIZ = "http://gexf.net/1.3/viz"
_TYPES = {bool: "boolean", int: "integer", float: "double", str: "string"}
_GREY = "#8c959f"

# Characters XML 1.0 cannot carry at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_chars(value: str) -> str:
    """``value`` without the control characters XML 1.0 forbids (ElementTree escapes the rest)."""
    return _NOT_XML.sub("", value)


class AttributeSpec:
    """One declared attribute: its name and its Python type (bool, int, float or str)."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type_: type) -> None:
        self.name = name
        self.type = type_

    def __repr__(self) -> str:
        return f"AttributeSpec({self.name!r}, {self.type.__name__})"


def _kind(value: Any) -> type:
    if isinstance(value, bool):
        return bool
    if isinstance(value, int):
        return int
    if isinstance(value, float):
        return float
    return str


def attribute_specs(items: Iterable[Mapping[str, Any]], *, skip: Iterable[str] = ()) -> list[AttributeSpec]:
    """The attributes used by ``items`` in first-seen order; a name used with two types is
    declared as a string (ints mixed with floats become floats)."""
    skipped = set(skip)
    found: dict[str, type] = {}
    for data in items:
        for name, value in data.items():
            if name in skipped or value is None:
                continue
            kind = _kind(value)
            seen = found.setdefault(name, kind)
            if seen is not kind:
                found[name] = float if {seen, kind} == {int, float} else str
    return [AttributeSpec(name, kind) for name, kind in found.items()]


def text_value(value: Any, kind: type) -> str:
    """A value as the text of a typed attribute (xsd lexical forms: true/false, 12, 1.5)."""
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        return repr(float(value))
    if kind is int:
        return str(int(value))
    return xml_chars(str(value))


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
