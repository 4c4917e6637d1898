"""A self-contained interactive lineage page: one HTML file with Cytoscape.js, the page's
script and style and the data inlined, so it works offline and from a file:// URL.

The page shows the Cytoscape.js elements and style of :mod:`exports.cytoscape` (laid
out by Graphviz when it is installed) and adds search, a category filter, a lineage
highlight on hover and a technique card on click (papers, repository, kernel status).

The rendering is reusable: :func:`page_parts` returns the page's data and the inline
scripts and style, and ``TechKGLineage.mount(element, data)`` draws it into any
element, so the web workbench can show the same lineage as this export.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from exports.cytoscape import CATEGORY_PREFIX, elements, stylesheet
from exports.dot import grid_positions
from exports.lineage import Lineage
from exports.style import KERNEL_LABELS, category_palette

__all__ = ["PageParts", "asset", "page_data", "page_parts", "render", "render_page", "script_json"]

#: The Content-Security-Policy of the page: nothing may be fetched, inline code only.
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
       "connect-src 'none'; base-uri 'none'; form-action 'none'")


#: A card lists at most this many papers (those that introduced it first); it says how many there are.
CARD_PAPERS = 30


@cache
def asset(name: str) -> str:
    """The text of one file of ``exports/assets``."""
    return (resources.files("exports") / "assets" / name).read_text(encoding="utf-8")


def script_json(value: Any) -> str:
    """JSON that is safe inside an HTML ``<script>`` element: no ``<``, ``>`` or ``&``
    (so no ``</script>`` or ``<!--``), and no line separators that old parsers choke on."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for ch, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                     ("\u2029", "\\u2029")):
        text = text.replace(ch, code)
    return text


def _title(lineage: Lineage) -> str:
    root = lineage.graph.graph.get("root")
    if root in lineage.graph:
        return "Lineage of " + str(lineage.graph.nodes[root]["name"])
    return "TechKG lineage"


def _cards(lineage: Lineage) -> dict[str, dict[str, Any]]:
    graph = lineage.graph
    cards: dict[str, dict[str, Any]] = {}
    for node, data in graph.nodes(data=True):
        if data["kind"] != "technique":
            continue
        parents = [{"id": u, "name": graph.nodes[u]["name"], "relation": d["relation"]}
                   for u, _, d in graph.in_edges(node, data=True) if d["kind"] == "lineage"]
        children = [{"id": v, "name": graph.nodes[v]["name"], "relation": d["relation"]}
                    for _, v, d in graph.out_edges(node, data=True) if d["kind"] == "lineage"]
        papers = []
        refs = lineage.papers.get(node, [])
        for ref in refs[:CARD_PAPERS]:
            paper = {"title": ref.title, "url": ref.link, "role": ref.role, "venue": ref.venue,
                     "issued": ref.issued, "arxiv": ref.arxiv}
            if lineage.options.include_private and ref.status:
                paper["status"] = ref.status
            papers.append({k: v for k, v in paper.items() if v is not None})
        card = {
            "id": node, "name": data["name"], "nameZh": data.get("name_zh"), "slug": data.get("slug"),
            "aliases": data.get("aliases"), "category": data["category"], "categoryLabel": data["category_label"],
            "onPage": data.get("on_page", True), "mine": data.get("mine") or None, "date": data.get("date"),
            "people": data.get("people"),
            "organisation": data.get("organisation"), "headline": data.get("headline"),
            "conditional": data.get("headline_conditional", False), "kernel": data.get("kernel", "not run"),
            "kernelLabel": KERNEL_LABELS.get(data.get("kernel", "not run"), data.get("kernel")),
            "repository": data.get("repository"), "summary": lineage.summaries.get(node),
            "papers": papers, "paperCount": data.get("papers", len(refs)),
            "parents": sorted(parents, key=lambda p: p["name"].casefold()),
            "children": sorted(children, key=lambda p: p["name"].casefold()),
        }
        cards[node] = {k: v for k, v in card.items() if v is not None}
    return cards


def page_data(lineage: Lineage, *, title: str | None = None, positions: bool = True) -> dict[str, Any]:
    """Everything the page script needs: elements, style, categories and technique cards."""
    layout = grid_positions(lineage) if positions else None
    techniques = lineage.techniques()
    return {
        "title": title or _title(lineage),
        "root": lineage.graph.graph.get("root"),
        "counts": {
            "techniques": len(techniques),
            "relations": len(lineage.lineage_edges()),
            "suggested": sum(1 for *_e, d in lineage.graph.edges(data=True) if d["kind"] == "suggested"),
            "accepted": sum(1 for *_e, d in lineage.graph.edges(data=True) if d.get("basis") == "accepted"),
            "added": sum(1 for *_e, d in lineage.graph.edges(data=True) if d.get("basis") == "added"),
            "mine": sum(1 for t in techniques if lineage.graph.nodes[t].get("mine")),
            "papers": sum(1 for _, d in lineage.graph.nodes(data=True) if d["kind"] == "paper"),
            "repositories": sum(1 for _, d in lineage.graph.nodes(data=True) if d["kind"] == "repository"),
        },
        "categories": [
            {"id": c.id, "node": CATEGORY_PREFIX + c.id, "label": c.label, "position": c.position,
             "colour": category_palette(c.position).base, "fill": category_palette(c.position).fill,
             "count": sum(1 for t in techniques if lineage.graph.nodes[t]["category"] == c.id)}
            for c in lineage.categories
        ],
        "elements": elements(lineage, positions=layout),
        "style": stylesheet(),
        "layout": "preset" if layout else "cose",
        "cards": _cards(lineage),
        "private": lineage.options.include_private,
    }


@dataclass(frozen=True)
class PageParts:
    """The pieces of the page, for embedding the same rendering elsewhere."""

    data: dict[str, Any]
    scripts: tuple[str, ...]
    css: str


def page_parts(lineage: Lineage, *, title: str | None = None) -> PageParts:
    return PageParts(page_data(lineage, title=title), (asset("cytoscape.min.js"), asset("lineage.js")),
                     asset("lineage.css"))


def _inline_script(code: str) -> str:
    # A script element ends at the first "</script"; the vendored and own code never
    # contain it, and this keeps it that way for any future update.
    if "</script" in code.lower() or "<!--" in code:
        raise ValueError("inline script contains '</script' or '<!--'")
    return f"<script>{code}</script>"


def render_page(lineage: Lineage, *, title: str | None = None) -> str:
    parts = page_parts(lineage, title=title)
    page_title = parts.data["title"]
    escaped_title = (page_title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                     .replace('"', "&quot;"))
    scripts = "\n".join(_inline_script(code) for code in parts.scripts)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="generator" content="TechKG">
<title>{escaped_title}</title>
<style>{parts.css}</style>
</head>
<body>
<div id="techkg-lineage" class="tkg-app"></div>
<script type="application/json" id="techkg-lineage-data">{script_json(parts.data)}</script>
{scripts}
<script>TechKGLineage.mount(document.getElementById("techkg-lineage"),
  JSON.parse(document.getElementById("techkg-lineage-data").textContent));</script>
</body>
</html>
"""


def render(lineage: Lineage) -> bytes:
    return render_page(lineage).encode("utf-8")
