"""Exporters: the lineage graph in the formats people open lineage graphs in, the RDF
graph in the standard RDF syntaxes, and BibTeX.

``LINEAGE_FORMATS`` is the registry of lineage formats. Each entry names the module
and function that renders a :class:`~exports.lineage.Lineage` to bytes; modules are
imported only when their format is used, so listing the formats stays cheap. The
contract tests in ``tests/exports`` run against every registered format.

What belongs here: an exporter (one module per format, registered here) and what they
share (:mod:`~exports.lineage` reads the lineage through the answer layer, kg.answer).
What does not: writing the graph, or anything of the server or the CLI; the workbench
draws its lineage through these exporters.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from os import PathLike
from pathlib import PurePath
from typing import TYPE_CHECKING, Protocol

from kg.errors import ExportError

if TYPE_CHECKING:
    from exports.lineage import Lineage

__all__ = ["LINEAGE_FORMATS", "LineageFormat", "format_for_path", "lineage_format", "render_lineage"]


class Renderer(Protocol):
    def __call__(self, lineage: Lineage) -> bytes: ...


@dataclass(frozen=True)
class LineageFormat:
    """One registered lineage format."""

    name: str
    suffixes: tuple[str, ...]
    media_type: str
    description: str
    module: str
    function: str = "render"
    binary: bool = False

    def renderer(self) -> Renderer:
        renderer: Renderer = getattr(import_module(self.module), self.function)
        return renderer


_FORMATS = (
    LineageFormat("graphml", (".graphml",), "application/graphml+xml",
                  "GraphML with typed attributes (Gephi, yEd, Cytoscape, igraph)", "exports.graphml"),
    LineageFormat("gexf", (".gexf",), "application/gexf+xml",
                  "GEXF 1.3 with typed attributes and category colours (Gephi)", "exports.gexf"),
    LineageFormat("dot", (".dot", ".gv"), "text/vnd.graphviz",
                  "Graphviz DOT, clustered and coloured by category", "exports.dot"),
    LineageFormat("svg", (".svg",), "image/svg+xml", "SVG drawn by Graphviz dot", "exports.dot",
                  "render_svg"),
    LineageFormat("png", (".png",), "image/png", "PNG drawn by Graphviz dot", "exports.dot", "render_png",
                  binary=True),
    LineageFormat("mermaid", (".mmd", ".mermaid", ".md"), "text/vnd.mermaid",
                  "Mermaid flowchart (renders on GitHub and in Markdown)", "exports.mermaid"),
    LineageFormat("cytoscape", (".cyjs", ".json"), "application/json",
                  "Cytoscape.js JSON (elements, style and positions)", "exports.cytoscape"),
    LineageFormat("html", (".html", ".htm"), "text/html",
                  "a self-contained interactive page (no network needed)", "exports.html"),
    LineageFormat("jsonld", (".jsonld", ".json"), "application/ld+json",
                  "JSON-LD of the lineage's triples with the TechKG @context", "exports.rdf",
                  "render_lineage_jsonld"),
)

#: Every lineage format, by name.
LINEAGE_FORMATS: dict[str, LineageFormat] = {f.name: f for f in _FORMATS}


def lineage_format(name: str) -> LineageFormat:
    """The registered format ``name``; an unknown one raises ExportError listing them."""
    try:
        return LINEAGE_FORMATS[name.lower()]
    except KeyError:
        raise ExportError(f"unknown lineage format {name!r}",
                          hint="Use one of: " + ", ".join(LINEAGE_FORMATS)) from None


def format_for_path(path: str | PathLike[str]) -> LineageFormat:
    """The lineage format a file name asks for by its suffix (``lineage.svg`` → svg)."""
    suffix = PurePath(path).suffix.lower()
    for spec in LINEAGE_FORMATS.values():
        if suffix in spec.suffixes:
            return spec
    raise ExportError(f"cannot tell the format from the file name {PurePath(path).name!r}",
                      hint="Pass --format (" + ", ".join(LINEAGE_FORMATS) + ") or use a suffix such as "
                      ".graphml, .gexf, .svg, .png, .mmd or .html.")


def render_lineage(lineage: Lineage, fmt: str) -> bytes:
    """``lineage`` rendered in the registered format ``fmt``."""
    return lineage_format(fmt).renderer()(lineage)
