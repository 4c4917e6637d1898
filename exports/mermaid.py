"""Mermaid flowchart text of the lineage, which GitHub and most Markdown viewers render.

One subgraph per category, styled in the category's colours; edges point from a
parent to what derives from it, labelled with the relation (dotted where inferred, and
for the suggested edges of ``--with-citations``, labelled "suggested").
Labels are quoted and every character Mermaid could read as syntax or HTML is written
as a Mermaid entity code (``#quot;``, ``#lt;``, ``#35;`` ...), so a name shows exactly
as it is and can neither break the diagram nor inject markup.
"""

from __future__ import annotations

import re

from exports.lineage import Lineage
from exports.style import category_palette

__all__ = ["label", "render", "render_mermaid"]

_ENTITIES = {'"': "#quot;", "#": "#35;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;",
             "\\": "#92;", "|": "#124;", "{": "#123;", "}": "#125;", "[": "#91;", "]": "#93;",
             "*": "#42;", "_": "#95;", "~": "#126;", "%": "#37;"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def label(value: str) -> str:
    """``value`` as the inside of a quoted Mermaid label."""
    value = _CONTROL.sub(" ", value)
    return "".join(_ENTITIES.get(ch, ch) for ch in value)


def render_mermaid(lineage: Lineage, *, direction: str = "LR") -> str:
    """The lineage as a Mermaid ``flowchart``."""
    graph = lineage.graph
    ids = {iri: f"n{i}" for i, iri in enumerate(graph.nodes)}
    out = [f"flowchart {direction}"]
    for category in lineage.categories:
        members = [n for n in graph if graph.nodes[n]["kind"] == "technique"
                   and graph.nodes[n]["category"] == category.id]
        out.append(f'  subgraph c{category.position}["{label(category.label)}"]')
        for node in members:
            data = graph.nodes[node]
            # Name only: a <br/> in a label makes Mermaid read an escaped backslash-n as a line break.
            name = data["name"] + (" (yours)" if data.get("mine") else "")
            out.append(f'    {ids[node]}["{label(name)}"]')
        out.append("  end")
    for node, data in graph.nodes(data=True):
        if data["kind"] == "paper":
            out.append(f'  {ids[node]}[/"{label(data["title"])}"/]')
        elif data["kind"] == "repository":
            out.append(f'  {ids[node]}[("{label(data["name"])}")]')
    for parent, child, _key, data in graph.edges(keys=True, data=True):
        arrow = "-.->" if data["kind"] != "lineage" or data.get("basis") == "inferred" else "-->"
        relation = ("suggested " if data["kind"] == "suggested" else "") + data["relation"]
        out.append(f'  {ids[parent]} {arrow}|"{label(relation)}"| {ids[child]}')
    for category in lineage.categories:
        palette = category_palette(category.position)
        out.append(f"  classDef cat{category.position} fill:{palette.fill},stroke:{palette.border},"
                   f"color:{palette.text}")
        out.append(f"  style c{category.position} fill:{palette.background},stroke:{palette.base}")
        members = [ids[n] for n in graph if graph.nodes[n]["kind"] == "technique"
                   and graph.nodes[n]["category"] == category.id]
        if members:
            out.append(f"  class {','.join(members)} cat{category.position}")
    mine = [ids[n] for n, d in graph.nodes(data=True) if d["kind"] == "technique" and d.get("mine")]
    if mine:  # the reader's own techniques (kg technique add)
        out.append("  classDef yours stroke-width:3px")
        out.append(f"  class {','.join(mine)} yours")
    offpage = [ids[n] for n, d in graph.nodes(data=True) if d["kind"] == "technique" and not d.get("on_page", True)]
    if offpage:
        out.append("  classDef lineageOnly stroke-dasharray:4 3")
        out.append(f"  class {','.join(offpage)} lineageOnly")
    return "\n".join(out) + "\n"


def render(lineage: Lineage) -> bytes:
    return render_mermaid(lineage).encode("utf-8")
