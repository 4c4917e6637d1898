"""``kg import``: bring a reading list or any RDF dump into the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kg.cli import state

__all__ = ["app"]

app = typer.Typer(help="Import a markdown reading list or an RDF dump.", no_args_is_help=True)

_EXTENSIONS = {
    ".nt": "N_TRIPLES", ".ntriples": "N_TRIPLES", ".nq": "N_QUADS", ".nquads": "N_QUADS",
    ".ttl": "TURTLE", ".turtle": "TURTLE", ".trig": "TRIG", ".rdf": "RDF_XML", ".xml": "RDF_XML",
    ".owl": "RDF_XML", ".jsonld": "JSON_LD", ".json": "JSON_LD", ".n3": "N3",
}
_NAMES = {"ntriples": "N_TRIPLES", "nquads": "N_QUADS", "turtle": "TURTLE", "trig": "TRIG",
          "rdfxml": "RDF_XML", "jsonld": "JSON_LD", "n3": "N3"}


@app.command("reading-list")
def reading_list(
    file: Annotated[Path, typer.Argument(help="Markdown reading list (tab- or pipe-separated tables).")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Import a markdown reading list; report its counts. A malformed file changes nothing."""
    from kg.catalog import load_catalog
    from kg.cli.output import console, emit_json
    from kg.reading import import_reading_list

    state().json_errors = json_out
    report = import_reading_list(state().store(), file, load_catalog())
    data = {"path": report.path, "entries": report.entries, "papers": report.papers, "read": report.read,
            "to_read": report.to_read, "with_note": report.with_note, "categories": report.categories,
            "stated_counts": report.stated_counts, "counts_match": report.counts_match,
            "linked_techniques": report.linked_techniques, "unmatched": report.unmatched,
            "status_changes": report.status_changes, "unchanged": report.unchanged}
    if json_out:
        emit_json(data)
        return
    out = console()
    out.print(f"Imported {file}: {report.entries} entries ({report.papers} papers), {report.read} read, "
              f"{report.to_read} to read, {report.with_note} with a note, in {report.categories} categories.")
    if report.stated_counts:
        verdict = "[green]matches[/]" if report.counts_match else "[red]does not match[/]"
        out.print(f"The file's header states {report.stated_counts[0]}/{report.stated_counts[1]}/"
                  f"{report.stated_counts[2]}: {verdict}.")
    out.print(f"{report.status_changes} reading statuses set or updated; "
              f"{len(report.linked_techniques)} entries are papers of catalog techniques.")
    if report.unmatched:
        out.print(f"[yellow]{len(report.unmatched)} entries matched no known paper and were added as new papers.[/]")


def rdf_format(path: Path, name: str | None) -> tuple[object, bool]:
    """The pyoxigraph RdfFormat for ``path`` (by ``name`` or extension) and whether it is gzipped."""
    import pyoxigraph as ox

    from kg.errors import RDFImportError

    gzipped = path.suffix == ".gz"
    if name:
        key = _NAMES.get(name.lower().replace("-", "").replace("_", ""))
        if key is None:
            raise RDFImportError(f"unknown RDF format {name!r}", hint="Use one of: " + ", ".join(_NAMES))
    else:
        ext = Path(path.stem).suffix if gzipped else path.suffix
        key = _EXTENSIONS.get(ext.lower())
        if key is None:
            raise RDFImportError(f"cannot tell the RDF format from the extension {ext or '(none)'!r}",
                                 path=str(path), hint="Pass --format (" + ", ".join(_NAMES) + ").")
    return getattr(ox.RdfFormat, key), gzipped


@app.command("rdf")
def rdf(
    file: Annotated[
        Path, typer.Argument(help="RDF dump: N-Triples, N-Quads, Turtle, TriG, RDF/XML, JSON-LD; .gz too.")
    ],
    graph: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Named graph to load into (a name like 'orkg' or a full IRI). Default: the file name."),
    ] = None,
    fmt: Annotated[
        Optional[str], typer.Option("--format", help="Override the format guessed from the extension.")  # noqa: UP045
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Bulk-load an RDF dump into a named graph, replacing it. A failure leaves the graph as it was."""
    import time

    from kg.cli.output import console, emit_json
    from kg.errors import RDFImportError
    from kg.graphs import graph_iri
    from kg.iris import slugify
    from kg.store.base import Activity

    state().json_errors = json_out
    if not file.is_file():
        raise RDFImportError("no such file", path=str(file), hint="Check the path.")
    rdf_fmt, gzipped = rdf_format(file, fmt)
    name = graph or "import/" + slugify(file.name.removesuffix(".gz").rsplit(".", 1)[0])
    target = graph_iri(name)
    started = time.perf_counter()
    count = state().store().load_file(
        file, graph=target, fmt=rdf_fmt, gzipped=gzipped,  # type: ignore[arg-type]
        activity=Activity("kg import rdf", used=[str(file)]),
    )
    seconds = time.perf_counter() - started
    data = {"file": str(file), "graph": target.value, "triples": count, "seconds": round(seconds, 3),
            "triples_per_second": round(count / seconds) if seconds else None}
    if json_out:
        emit_json(data)
    else:
        console().print(f"Loaded {count} triples into <{target.value}> in {seconds:.1f} s "
                        f"({data['triples_per_second']} triples/s).")
