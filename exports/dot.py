"""Graphviz DOT of the lineage, SVG/PNG rendered from it by Graphviz's own ``dot``, and
the node positions the other drawn exports reuse.

Techniques sit in one cluster per category, coloured like the category; edges point
from a parent to what derives from it and are labelled with the typed relation
(dashed where the lineage is inferred rather than stated by a source, green where the
reader added it from citation evidence; suggested edges, ``--with-citations``, are dashed
amber and labelled "suggested"). Lineage-only
parents have a dashed border. Names are written as Graphviz HTML-like labels, so
they are XML-escaped; quoted attributes escape backslashes and quotes.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from exports.lineage import Lineage
from exports.style import FONT, KERNEL_LABELS, category_palette
from kg.errors import ExportError

__all__ = [
    "DotRender",
    "caption",
    "grid_positions",
    "html_text",
    "layout_positions",
    "node_ids",
    "quoted",
    "render",
    "render_dot",
    "render_png",
    "render_svg",
    "run_dot",
]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
Box = tuple[float, float, float, float]


def html_text(value: str) -> str:
    """Text for a Graphviz HTML-like label: XML-escaped, one line, no control characters."""
    value = _CONTROL.sub("", value.replace("\r", " ").replace("\n", " "))
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def quoted(value: str) -> str:
    """A DOT double-quoted string whose escape sequences (\\N, \\l, ...) stay literal."""
    value = _CONTROL.sub("", value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def node_ids(lineage: Lineage) -> dict[str, str]:
    """IRI → a DOT identifier (``n0``, ``n1``, ...) in the graph's node order."""
    return {iri: f"n{i}" for i, iri in enumerate(lineage.graph.nodes)}


def _short(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def caption(data: dict[str, Any]) -> tuple[str, str]:
    """A node's two label lines: its name, and date · organisation (shortened), after
    "yours" for a technique the reader added."""
    if data["kind"] == "paper":
        return _short(str(data["title"]), 48), str(data.get("date") or "")
    if data["kind"] != "technique":
        return str(data["label"]), ""
    who = _short(str(data.get("organisation") or data.get("people") or ""), 28)
    mine = "yours" if data.get("mine") else None
    return str(data["name"]), " · ".join(str(f) for f in (mine, data.get("date"), who) if f)


def _label(data: dict[str, Any]) -> str:
    name, line = caption(data)
    label = f"<B>{html_text(name)}</B>" if data["kind"] == "technique" else html_text(name)
    if line:
        label += f'<BR/><FONT POINT-SIZE="8" COLOR="#4a4f57">{html_text(line)}</FONT>'
    return f"<{label}>"


def _tooltip(data: dict[str, Any]) -> str:
    parts = [data.get("name") or data.get("label") or "", data.get("name_zh") or "", data.get("headline") or "",
             KERNEL_LABELS.get(data.get("kernel", ""), "")]
    return " — ".join(p for p in parts if p)


def render_dot(lineage: Lineage, *, title: str | None = None, only: Collection[str] | None = None,
               clusters: bool = True) -> str:
    """The lineage as DOT text; ``only`` restricts it to some nodes (and the edges among them)."""
    graph = lineage.graph
    ids = node_ids(lineage)
    keep = set(graph) if only is None else set(only)
    root = graph.graph.get("root")
    heading = title if title is not None else (
        "Lineage of " + graph.nodes[root]["name"] if root in graph else "TechKG lineage")
    label = f", fontsize=18, labelloc=t, labeljust=l, label=<<B>{html_text(heading)}</B>>" if heading else ""
    out = [
        "digraph lineage {",
        f"  graph [rankdir=LR, newrank=true, nodesep=0.18, ranksep=0.55, pad=0.3, "
        f'bgcolor="white", fontname={quoted(FONT)}{label}];',
        f'  node [shape=box, style="rounded,filled", fontname={quoted(FONT)}, fontsize=11, '
        f'margin="0.14,0.06", penwidth=1.3, height=0.42];',
        f'  edge [fontname={quoted(FONT)}, fontsize=9, color="#5b6270", fontcolor="#3b4048", '
        f"arrowsize=0.7, penwidth=1.1];",
    ]
    # dot stacks clusters bottom-up in LR layouts: emit them last-first so the page's
    # first category tends to end up on top.
    for category in reversed(lineage.categories):
        palette = category_palette(category.position)
        members = [n for n in graph if n in keep and graph.nodes[n]["kind"] == "technique"
                   and graph.nodes[n]["category"] == category.id]
        if not members:
            continue
        if clusters:
            out.append(f"  subgraph cluster_{category.position} {{")
            out.append(f'    graph [label=<<B>{html_text(category.label)}</B>>, style="rounded,filled", '
                       f'fillcolor="{palette.background}", color="{palette.base}", '
                       f'fontcolor="{palette.border}", fontsize=13, margin=10];')
        for node in members:
            data = graph.nodes[node]
            style = "rounded,filled" if data.get("on_page", True) else "rounded,filled,dashed"
            out.append(f"    {ids[node]} [label={_label(data)}, fillcolor=\"{palette.fill}\", "
                       f'color="{palette.border}", style="{style}", tooltip={quoted(_tooltip(data))}];')
        if clusters:
            out.append("  }")
    for node, data in graph.nodes(data=True):
        if node not in keep:
            continue
        if data["kind"] == "paper":
            out.append(f'  {ids[node]} [label={_label(data)}, shape=note, style="filled", fillcolor="#ffffff", '
                       f'color="#8c959f", fontsize=9, tooltip={quoted(data["title"])}];')
        elif data["kind"] == "repository":
            out.append(f'  {ids[node]} [label={_label(data)}, shape=component, style="filled", '
                       f'fillcolor="#f6f8fa", color="#8c959f", fontsize=9];')
        elif data["kind"] == "cluster":  # techniques folded under their catalog ancestor
            out.append(f'  {ids[node]} [label={_label(data)}, shape=folder, style="filled,dashed", '
                       f'fillcolor="#f6f8fa", color="#8c959f", fontsize=9];')
    for parent, child, _key, data in graph.edges(keys=True, data=True):
        if parent not in keep or child not in keep:
            continue
        if data["kind"] == "cluster":
            out.append(f'  {ids[parent]} -> {ids[child]} [style="dotted", color="#8c959f", arrowhead=none];')
            continue
        relation = ("suggested " if data["kind"] == "suggested" else "") + data["relation"]
        attrs = [f"label={quoted(relation)}"]
        if data["kind"] == "lineage":
            if data.get("basis") == "inferred":
                attrs.append('style="dashed"')
            if data.get("basis") in ("accepted", "added"):  # added by the reader (citation evidence, kg technique)
                attrs.append('color="#1a7f37"')
            if data.get("note"):
                attrs.append(f"tooltip={quoted(data['note'])}")
        elif data["kind"] == "suggested":
            attrs += ['style="dashed"', 'color="#bf8700"', 'fontcolor="#7d4e00"',
                      f"tooltip={quoted(data.get('evidence') or data['note'])}"]
        else:
            attrs += ['style="dotted"', 'color="#8c959f"', "arrowsize=0.5"]
        out.append(f"  {ids[parent]} -> {ids[child]} [{', '.join(attrs)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def render(lineage: Lineage) -> bytes:
    return render_dot(lineage).encode("utf-8")


@dataclass(frozen=True)
class DotRender:
    """What ``dot`` produced, and whatever it said on stderr (warnings)."""

    output: bytes
    warnings: str


def run_dot(source: str, fmt: str, *, dpi: int | None = None, timeout: float = 120.0) -> DotRender:
    """Run Graphviz ``dot -T<fmt>`` on ``source``. Raises ExportError when dot is missing or fails."""
    exe = shutil.which("dot")
    if exe is None:
        raise ExportError("Graphviz `dot` is not installed, so SVG and PNG cannot be rendered",
                          hint="Install Graphviz (Debian/Ubuntu: apt-get install graphviz; "
                          "scripts/setup does it), or export --format dot and render it elsewhere.")
    try:
        args = [exe, f"-T{fmt}", *([f"-Gdpi={dpi}"] if dpi else [])]
        proc = subprocess.run(args, input=source.encode("utf-8"), capture_output=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        raise ExportError(f"Graphviz dot did not finish within {timeout:.0f} s",
                          hint="Export a smaller part of the lineage: --root, --depth or --category.") from None
    warnings = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        raise ExportError(f"Graphviz dot failed (exit {proc.returncode}): {warnings}",
                          hint="Export --format dot and report the file; the DOT text should always render.")
    return DotRender(proc.stdout, warnings)


def render_svg(lineage: Lineage) -> bytes:
    return run_dot(render_dot(lineage), "svg").output


def render_png(lineage: Lineage) -> bytes:
    return run_dot(render_dot(lineage), "png", dpi=144).output


def _plain_positions(lineage: Lineage, source: str) -> tuple[dict[str, Box], float, float]:
    """Node boxes (x, y centre, width, height in points, y down) and the drawing's size."""
    plain = run_dot(source, "plain").output.decode("utf-8", "replace")
    by_id = {v: k for k, v in node_ids(lineage).items()}
    width = height = 0.0
    out: dict[str, Box] = {}
    for line in plain.splitlines():
        parts = line.split(" ", 6)
        if parts[0] == "graph" and len(parts) >= 4:
            width, height = float(parts[2]) * 72, float(parts[3]) * 72
        elif parts[0] == "node" and len(parts) >= 6 and parts[1] in by_id:
            x, y, w, h = (float(v) for v in parts[2:6])
            out[by_id[parts[1]]] = (x * 72, height - y * 72, w * 72, h * 72)
    return out, width, height


def layout_positions(lineage: Lineage) -> dict[str, Box] | None:
    """Graphviz's layout of the DOT export, as node boxes; None without Graphviz."""
    if shutil.which("dot") is None:
        return None
    return _plain_positions(lineage, render_dot(lineage))[0]


def grid_positions(lineage: Lineage, *, aspect: float = 1.8, gap: float = 70.0) -> dict[str, Box] | None:
    """A compact layout for screens: each category laid out by Graphviz on its own, then the
    categories packed in rows (in page order) to fill a ``aspect``:1 rectangle. Papers and
    repositories join the category of the first technique they attach to. None without
    Graphviz."""
    if shutil.which("dot") is None:
        return None
    graph = lineage.graph
    groups: dict[str, list[str]] = {c.id: [] for c in lineage.categories}
    for node, data in graph.nodes(data=True):
        if data["kind"] == "technique":
            groups.setdefault(data["category"], []).append(node)
    for node, data in graph.nodes(data=True):
        if data["kind"] != "technique":
            anchors = [n for n in graph.predecessors(node)] + [n for n in graph.successors(node)]
            anchor = next((n for n in anchors if graph.nodes[n]["kind"] == "technique"), None)
            if anchor is not None:
                groups[graph.nodes[anchor]["category"]].append(node)
    laid: list[tuple[dict[str, Box], float, float]] = []
    for members in groups.values():
        if members:
            laid.append(_plain_positions(lineage, render_dot(lineage, title="", only=members, clusters=False)))
    if not laid:
        return {}
    area = sum((w + gap) * (h + gap) for _, w, h in laid)
    row_width = max(max(w for _, w, _ in laid), math.sqrt(area * aspect))
    out: dict[str, Box] = {}
    x = y = row_height = 0.0
    for boxes, w, h in laid:
        if x > 0 and x + w > row_width:
            x, y, row_height = 0.0, y + row_height + gap, 0.0
        for node, (nx_, ny, nw, nh) in boxes.items():
            out[node] = (x + nx_, y + ny, nw, nh)
        x += w + gap
        row_height = max(row_height, h)
    return out
