"""Cytoscape.js JSON: the lineage as Cytoscape.js elements with a stylesheet and the
positions Graphviz chose, loadable with ``cytoscape({elements, style})``, by Cytoscape
desktop (File → Import → Network from File, ``.cyjs``) and by networkx's
``cytoscape_graph``.

Categories are compound (parent) nodes of kind ``category``; every other node keeps
its IRI as ``id`` and ``value`` and the same attributes as in GraphML. The HTML page
renders exactly these elements with exactly this style.
"""

from __future__ import annotations

import json
from typing import Any

from exports.dot import caption, grid_positions
from exports.lineage import Lineage
from exports.style import FONT, category_palette

__all__ = ["CATEGORY_PREFIX", "document", "elements", "render", "stylesheet"]

CATEGORY_PREFIX = "category:"
_GREY = category_palette(10)


def _size(name: str, second: str) -> tuple[float, float]:
    """A node box that fits its label when Graphviz is not there to measure it."""
    widest = max(len(name) * 6.4, len(second) * 5.9)
    return round(max(widest + 24, 70), 1), 40.0 if second else 30.0


def elements(lineage: Lineage, *, positions: dict[str, tuple[float, float, float, float]] | None = None,
             ) -> dict[str, list[dict[str, Any]]]:
    """Nodes (categories as compound parents first) and edges in Cytoscape.js form."""
    graph = lineage.graph
    nodes: list[dict[str, Any]] = []
    for category in lineage.categories:
        palette = category_palette(category.position)
        nodes.append({"group": "nodes", "data": {
            "id": CATEGORY_PREFIX + category.id, "value": CATEGORY_PREFIX + category.id, "kind": "category",
            "label": category.label, "name": category.label, "order": category.position,
            "colour": palette.base, "background": palette.background, "text": palette.border,
        }, "classes": "category", "selectable": False})
    positions_by_category = {c.id: c.position for c in lineage.categories}
    for node, data in graph.nodes(data=True):
        element: dict[str, Any] = {"group": "nodes", "data": {"id": node, "value": node, **data}}
        kind = data["kind"]
        classes = [kind]
        name, second = caption(data)
        element["data"]["display"] = name + ("\n" + second if second else "")
        if kind == "technique":
            palette = category_palette(positions_by_category.get(data["category"], 10))
            element["data"]["parent"] = CATEGORY_PREFIX + data["category"]
            if not data.get("on_page", True):
                classes.append("lineage-only")
        else:
            palette = _GREY
        element["data"].update(fill=palette.fill, border=palette.border)
        if positions and node in positions:
            x, y, w, h = positions[node]
            element["position"] = {"x": round(x, 1), "y": round(y, 1)}
            text_width = max(len(name) * 6.4, len(second) * 5.9) + 18  # 10px text may be wider than dot's
            element["data"].update(w=round(max(w, text_width), 1), h=round(h, 1))
        else:
            w, h = _size(name, second)
            element["data"].update(w=w, h=h)
        element["classes"] = " ".join(classes)
        nodes.append(element)
    edges = []
    for number, (source, target, key, data) in enumerate(graph.edges(keys=True, data=True)):
        classes = [data["kind"]]
        if data.get("basis") in ("inferred", "accepted", "added"):
            classes.append(data["basis"])
        edges.append({"group": "edges", "data": {"id": f"e{number}", "source": source, "target": target,
                                                  "key": key, **data}, "classes": " ".join(classes)})
    return {"nodes": nodes, "edges": edges}


def stylesheet() -> list[dict[str, Any]]:
    """The Cytoscape.js style of the lineage (the HTML page's look)."""
    return [
        {"selector": "node[w]", "style": {"width": "data(w)", "height": "data(h)"}},
        {"selector": "node", "style": {
            "shape": "round-rectangle",
            "background-color": "data(fill)", "border-color": "data(border)", "border-width": 1.4,
            "label": "data(display)", "text-wrap": "wrap", "text-valign": "center", "text-halign": "center",
            "font-family": f"{FONT}, Noto Sans CJK SC, sans-serif", "font-size": 10, "color": "#1f2328",
            "transition-property": "opacity", "transition-duration": "120ms"}},
        {"selector": "node.category", "style": {
            "background-color": "data(background)", "border-color": "data(colour)", "border-width": 1.2,
            "label": "data(label)", "text-valign": "top", "text-halign": "center", "font-size": 13,
            "font-weight": "bold", "color": "data(text)", "padding": "12px", "text-margin-y": -4}},
        {"selector": "node.lineage-only", "style": {"border-style": "dashed"}},
        {"selector": "node.paper", "style": {"shape": "rectangle", "font-size": 9, "text-max-width": "180px"}},
        {"selector": "node.repository", "style": {"shape": "barrel", "font-size": 9}},
        {"selector": "edge", "style": {
            "curve-style": "bezier", "target-arrow-shape": "triangle", "arrow-scale": 0.8, "width": 1.3,
            "line-color": "#5b6270", "target-arrow-color": "#5b6270",
            "font-size": 9, "color": "#3b4048", "text-background-color": "#ffffff",
            "text-background-opacity": 0.85, "text-background-padding": "1px",
            "font-family": f"{FONT}, sans-serif"}},
        # only edges that have a relation are labelled with it (a cluster's edge has none)
        {"selector": "edge[relation]", "style": {"label": "data(relation)"}},
        {"selector": "edge.inferred", "style": {"line-style": "dashed"}},
        {"selector": "edge.accepted, edge.added", "style": {"line-color": "#1a7f37", "target-arrow-color": "#1a7f37"}},
        {"selector": "edge.suggested", "style": {
            "line-style": "dashed", "line-dash-pattern": [6, 4], "line-color": "#bf8700",
            "target-arrow-color": "#bf8700", "color": "#7d4e00"}},
        {"selector": "edge.paper, edge.code", "style": {
            "line-style": "dotted", "line-color": "#8c959f", "target-arrow-color": "#8c959f"}},
        {"selector": ".faded", "style": {"opacity": 0.14}},
        {"selector": "node.highlighted", "style": {"border-width": 2.6, "z-index": 10}},
        {"selector": "edge.highlighted", "style": {
            "width": 2.4, "line-color": "#1f6feb", "target-arrow-color": "#1f6feb", "z-index": 10}},
        {"selector": "node.match", "style": {"border-width": 3, "border-color": "#d1242f"}},
        {"selector": "node:selected", "style": {"border-width": 3, "border-color": "#0969da",
                                                "overlay-opacity": 0}},
        {"selector": ".hidden", "style": {"display": "none"}},
    ]


def document(lineage: Lineage, *, with_positions: bool = True) -> dict[str, Any]:
    """The whole Cytoscape.js JSON document."""
    positions = grid_positions(lineage) if with_positions else None
    return {
        "format_version": "1.0",
        "generated_by": "TechKG",
        "target_cytoscapejs_version": "~3.30",
        "data": {"name": lineage.graph.graph.get("name", "TechKG lineage"), **lineage.graph.graph},
        "directed": True,
        "multigraph": True,
        "elements": elements(lineage, positions=positions),
        "style": stylesheet(),
        "layout": {"name": "preset"} if positions else {"name": "cose", "animate": False},
    }


def render(lineage: Lineage) -> bytes:
    return (json.dumps(document(lineage), ensure_ascii=False, indent=1) + "\n").encode("utf-8")
