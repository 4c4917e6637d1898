"""``kg export``: the lineage in the formats people open lineage graphs in, the RDF graph,
and BibTeX. Private reading state stays out unless ``--include-private`` is given."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer

from kg.cli import state

__all__ = ["app"]

app = typer.Typer(help="Export the lineage (GraphML, GEXF, DOT/SVG/PNG, Mermaid, Cytoscape.js, HTML, "
                  "JSON-LD), the RDF graph, or a BibTeX bibliography.", no_args_is_help=True)


class LineageFormatName(StrEnum):
    graphml = "graphml"
    gexf = "gexf"
    dot = "dot"
    svg = "svg"
    png = "png"
    mermaid = "mermaid"
    cytoscape = "cytoscape"
    html = "html"
    jsonld = "jsonld"


class RdfFormatName(StrEnum):
    turtle = "turtle"
    ntriples = "ntriples"
    nquads = "nquads"
    trig = "trig"
    jsonld = "jsonld"


class BibFormatName(StrEnum):
    bibtex = "bibtex"


class Direction(StrEnum):
    up = "up"
    down = "down"
    both = "both"


OutputOpt = Annotated[Path, typer.Option("--output", "-o", help="File to write ('-' for standard output).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite the file if it exists.")]
PrivateOpt = Annotated[bool, typer.Option("--include-private",
                                          help="Include reading status, notes and reading-list links "
                                          "(left out by default).")]
RootOpt = Annotated[Optional[str], typer.Option("--root", help="Only this technique's lineage (name, alias or IRI).")]  # noqa: UP045
DirectionOpt = Annotated[Direction, typer.Option(help="With --root: ancestors (up), descendants (down) or both.")]
DepthOpt = Annotated[int, typer.Option(min=1, help="With --root: follow at most this many lineage steps.")]
BibDirectionOpt = Annotated[Direction, typer.Option(help="With --lineage: ancestors (up), descendants (down) or both.")]
BibDepthOpt = Annotated[int, typer.Option(min=1, help="With --lineage: follow at most this many lineage steps.")]


def _report(path: Path | None, written: int, what: str) -> None:
    if path is None:
        return
    from rich.markup import escape

    from kg.cli.output import err_console

    err_console().print(f"[green]✓[/] wrote {escape(what)} to {escape(str(path))} ({written:,} bytes)")


@app.command("lineage")
def lineage(
    output: OutputOpt,
    fmt: Annotated[Optional[LineageFormatName], typer.Option(  # noqa: UP045
        "--format", "-f", help="Output format (default: from the file name's suffix).")] = None,
    root: RootOpt = None,
    direction: DirectionOpt = Direction.both,
    depth: DepthOpt = 10,
    category: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--category", "-c", help="Only techniques of this category (repeatable)."),
    ] = None,
    with_papers: Annotated[bool, typer.Option("--with-papers", help="Add the papers behind each technique.")] = False,
    with_repositories: Annotated[bool, typer.Option("--with-repositories",
                                                    help="Add each technique's code repository.")] = False,
    with_citations: Annotated[bool, typer.Option(
        "--with-citations", help="Mark each edge confirmed by citations or not, with its evidence, and add the "
                                 "edges kg suggest lineage proposes, dashed (kg ingest citations first).")] = False,
    force: ForceOpt = False,
    include_private: PrivateOpt = False,
) -> None:
    """The lineage graph of techniques (and optionally papers and repositories) in one file."""
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from exports import format_for_path, lineage_format
    from exports.lineage import LineageOptions, build_lineage
    from exports.output import check_target, write_output
    from kg.cli.output import err_console

    spec = lineage_format(fmt.value) if fmt else format_for_path(output)
    target = check_target(output, force=force, suffixes=spec.suffixes, fmt=spec.name, binary=spec.binary)
    options = LineageOptions(root=root, direction=direction.value, depth=depth, categories=tuple(category or ()),
                             with_papers=with_papers, with_repositories=with_repositories,
                             include_private=include_private, with_citations=with_citations)
    stderr = err_console()  # a spinner on a terminal only: in a pipe it would leave a blank line
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=stderr, transient=True,
                  disable=not stderr.is_terminal) as bar:
        task = bar.add_task("reading the lineage from the store", total=None)
        graph = build_lineage(state().reader(), options)
        bar.update(task, description=f"rendering {graph.graph.number_of_nodes()} nodes as {spec.name}")
        data = spec.renderer()(graph)
    written = write_output(target, data, force=force)
    _report(target, written, f"the lineage ({len(graph.techniques())} techniques, "
                             f"{len(graph.lineage_edges())} relations) as {spec.name}")


@app.command("rdf")
def rdf(
    output: OutputOpt,
    fmt: Annotated[RdfFormatName, typer.Option("--format", "-f", help="RDF syntax.")] = RdfFormatName.turtle,
    graph: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--graph", "-g", help="Only this named graph (catalog, reading-list, arxiv, ...)."),
    ] = None,
    context_url: Annotated[bool, typer.Option("--context-url",
                                              help="JSON-LD: refer to the published @context by URL "
                                              "instead of embedding it.")] = False,
    force: ForceOpt = False,
    include_private: PrivateOpt = False,
) -> None:
    """The RDF graph (all named graphs, or one) as Turtle, N-Triples, N-Quads, TriG or JSON-LD."""
    from exports.output import check_target, write_output
    from exports.rdf import RDF_EXPORT_FORMATS, render_rdf

    suffixes = RDF_EXPORT_FORMATS[fmt.value][0]
    target = check_target(output, force=force, suffixes=suffixes, fmt=fmt.value)
    data = render_rdf(state().reader(), fmt.value, graph=graph, include_private=include_private,
                      context_ref="url" if context_url else "inline")
    written = write_output(target, data, force=force)
    _report(target, written, f"{'the ' + graph + ' graph' if graph else 'the graph'} as {fmt.value}")


@app.command("bibtex")
def bibtex(
    output: OutputOpt,
    lineage_root: Annotated[Optional[str], typer.Option("--lineage",  # noqa: UP045
                                                        help="The papers behind this technique's lineage "
                                                        "instead of the reading list.")] = None,
    direction: BibDirectionOpt = Direction.both,
    depth: BibDepthOpt = 10,
    fmt: Annotated[BibFormatName, typer.Option(
        "--format", "-f", help="Output format (BibTeX, read by bibtex and biber alike).")] = BibFormatName.bibtex,
    force: ForceOpt = False,
    include_private: PrivateOpt = False,
) -> None:
    """A BibTeX bibliography of the reading list, or of a lineage, with stable citation keys."""
    from exports.bibtex import bibliography, render_bibtex
    from exports.lineage import LineageOptions, build_lineage
    from exports.output import check_target, write_output

    target = check_target(output, force=force, suffixes=(".bib",), fmt="bibtex")
    store = state().store()
    papers = None
    header = "TechKG bibliography of the reading list."
    if lineage_root:
        chosen = build_lineage(store, LineageOptions(root=lineage_root, direction=direction.value, depth=depth))
        papers = [p.iri for t in chosen.techniques() for p in chosen.papers.get(t, [])]
        root_name = chosen.graph.nodes[chosen.graph.graph["root"]]["name"]
        header = f"TechKG bibliography of the lineage of {root_name}."
    entries = bibliography(store, papers=papers, include_private=include_private)
    data = render_bibtex(entries, header=header + " Citation keys are stable: once assigned they never change.")
    written = write_output(target, data.encode("utf-8"), force=force)
    _report(target, written, f"{len(entries)} BibTeX entries")
