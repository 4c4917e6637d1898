"""``kg import``: bring a reading list or any RDF dump into the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt, JsonFlag, pick_format

__all__ = ["app"]

app = typer.Typer(help="Import a markdown reading list or an RDF dump.", no_args_is_help=True)

_EXTENSIONS = {
    ".nt": "N_TRIPLES", ".ntriples": "N_TRIPLES", ".nq": "N_QUADS", ".nquads": "N_QUADS",
    ".ttl": "TURTLE", ".turtle": "TURTLE", ".trig": "TRIG", ".rdf": "RDF_XML", ".xml": "RDF_XML",
    ".owl": "RDF_XML", ".jsonld": "JSON_LD", ".json": "JSON_LD", ".n3": "N3",
}
_NAMES = {"ntriples": "N_TRIPLES", "nquads": "N_QUADS", "turtle": "TURTLE", "trig": "TRIG",
          "rdfxml": "RDF_XML", "jsonld": "JSON_LD", "n3": "N3"}
#: Every syntax ``kg import rdf`` reads (``--syntax NAME``).
SYNTAXES = tuple(_NAMES)
FORMATS_ALLOWED = tuple(f.value for f in Format)
#: What each step of a load is called on its progress bar (kg.store.base.Progress).
_STEPS = {"reading": "Reading the file (MB)", "loading": "Loading into the store",
          "comparing": "Comparing with the graph", "removing": "Removing triples", "adding": "Adding triples",
          "parsing": "Reading triples"}


@app.command("reading-list")
def reading_list(
    file: Annotated[Path, typer.Argument(help="Markdown reading list (tab- or pipe-separated tables).")],
    accept_counts: Annotated[bool, typer.Option(
        "--accept-counts", help="Import it even if its tables disagree with the counts its header states.")] = False,
    fmt: FormatOpt = Format.table,
    json_out: JsonFlag = False,
) -> None:
    """Make a markdown reading list your reading list, replacing the current one: entries that
    left it leave the reading state, papers that stay keep their statuses and notes. A snapshot
    is kept first (kg undo). A malformed file, or counts that disagree with its header, change nothing."""
    from kg.catalog import load_catalog
    from kg.cli.core import _print_import
    from kg.cli.links import relinking
    from kg.cli.output import console, emit_machine
    from kg.graphs import READING_LIST
    from kg.reading import import_reading_list
    from kg.wording import counted

    fmt = pick_format(fmt, as_json=json_out)
    store = state().store()
    with relinking([READING_LIST], label="kg import reading-list (links)") as linked:
        report = import_reading_list(store, file, load_catalog(), accept_counts=accept_counts)
    from kg.cli.search import keep_index_current

    keep_index_current(store, papers=linked.papers, graphs=linked.graphs)
    data = {"path": report.path, "entries": report.entries, "papers": report.papers, "read": report.read,
            "to_read": report.to_read, "with_note": report.with_note, "categories": report.categories,
            "stated_counts": report.stated_counts, "counts_match": report.counts_match,
            "linked_techniques": report.linked_techniques, "unmatched": report.unmatched,
            "status_changes": report.status_changes, "removed": report.removed, "unchanged": report.unchanged}
    if emit_machine(fmt, data, [{k: v for k, v in data.items() if not isinstance(v, list | tuple)}]):
        return
    out = console()
    out.print(f"Imported {file}: {counted(report.entries, 'entry', 'entries')} "
              f"({counted(report.papers, 'paper')}), {report.read} read, "
              f"{report.to_read} to read, {report.with_note} with a note, in {report.categories} categories.")
    if report.stated_counts and report.counts_match:
        out.print(f"The file's header states {report.stated_counts[0]}/{report.stated_counts[1]}/"
                  f"{report.stated_counts[2]}: [green]matches[/].")
    out.print(f"{report.status_changes} reading statuses set or updated; "
              f"{len(report.linked_techniques)} entries are papers of catalog techniques.")
    _print_import(report, out)


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
                                 path=str(path), hint="Pass --syntax (" + ", ".join(_NAMES) + ").")
    return getattr(ox.RdfFormat, key), gzipped


@app.command("rdf")
def rdf(
    file: Annotated[
        Path, typer.Argument(help="RDF dump: N-Triples, N-Quads, Turtle, TriG, RDF/XML, JSON-LD; .gz too.")
    ],
    graph: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Import graph to load into: import/NAME (a short name like 'orkg' becomes "
                     "import/orkg) or a full IRI. Default: import/<file name>. TechKG's own graphs are refused."),
    ] = None,
    syntax: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--syntax", help="The file's RDF syntax (" + ", ".join(_NAMES) + "), if its extension "
                     "does not say.", show_default=False),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="How to print the report: table, json or csv.")]
    = "table",
    link: Annotated[bool, typer.Option("--link/--no-link", help="Link the papers the import added or changed "
                                                                "to their techniques (kg link does it later).")]
    = True,
    json_out: JsonFlag = False,
) -> None:
    """Bulk-load an RDF dump into an import graph, replacing it. A failure leaves the graph as it was. The papers
    it adds or changes are then linked to their techniques (and, when it brings techniques or names, the papers
    those can match), in a transaction of its own."""
    import time

    from kg.cli.output import console, emit_machine, progress_bar
    from kg.errors import RDFImportError
    from kg.iris import slugify
    from kg.store.base import Activity
    from kg.wording import counted

    if fmt.lower().replace("-", "").replace("_", "") in _NAMES:  # -f was the RDF syntax before --syntax
        raise RDFImportError(f"-f/--format is how the report is printed; {fmt!r} is an RDF syntax",
                             hint=f"Pass --syntax {fmt} (and -f table, json or csv for the report).")
    if fmt not in FORMATS_ALLOWED:
        raise RDFImportError(f"unknown report format {fmt!r}", hint="Use -f table, json or csv.")
    report_fmt = pick_format(fmt, as_json=json_out)
    if not file.is_file():
        raise RDFImportError("no such file", path=str(file), hint="Check the path.")
    rdf_fmt, gzipped = rdf_format(file, syntax)
    target = import_graph(graph or slugify(file.name.removesuffix(".gz").rsplit(".", 1)[0]))
    started = time.perf_counter()
    activity = Activity("kg import rdf", used=[str(file)])
    from kg.cli.links import relinking

    with relinking([target], label="kg import rdf (links)", names=True, enabled=link) as linked, \
            progress_bar(show=report_fmt is Format.table) as bar:
        tasks: dict[str, Any] = {}

        def progress(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(_STEPS.get(step, step), total=total or None)
            bar.update(tasks[step], completed=done, total=total or None)

        count = state().store().load_file(
            file, graph=target, fmt=rdf_fmt, gzipped=gzipped,  # type: ignore[arg-type]
            activity=activity, progress=progress,
        )
    seconds = time.perf_counter() - started
    from kg.cli.search import keep_index_current

    # the import graph followed to its documents; the papers linked again, in links
    keep_index_current(state().store(), papers=linked.papers, graphs=linked.graphs or None)
    skipped = activity.stats.get("skipped_provenance", 0)
    added, removed = activity.stats.get("added", count), activity.stats.get("removed", 0)
    data = {"file": str(file), "graph": target.value, "triples": count, "added": added, "removed": removed,
            "seconds": round(seconds, 3), "triples_per_second": round(count / seconds) if seconds else None,
            "skipped_provenance": skipped}
    if emit_machine(report_fmt, data):
        return
    out = console()
    if "removed" in activity.stats:
        out.print(f"Replaced <{target.value}>: {counted(count, 'triple', grouped=True)} ({added:,} added, "
                  f"{removed:,} removed) "
                  f"in {seconds:.1f} s.")
    else:
        out.print(f"Loaded {counted(count, 'triple', grouped=True)} into <{target.value}> in {seconds:.1f} s "
                  f"({data['triples_per_second']:,} triples/s).")
    if skipped:
        out.print(f"Left out {skipped} provenance records of the store that wrote the file: TechKG keeps its "
                  "own. To bring back a whole store as it was, use kg restore FILE.")


def import_graph(name: str) -> Any:
    """The graph ``kg import rdf`` loads into: ``import/<name>`` for a short name, or a
    full IRI; never one of TechKG's own graphs."""
    import pyoxigraph as ox

    from kg.errors import ProtectedGraphError
    from kg.graphs import IMPORT_PREFIX, OWNERS, SOURCES, graph_kind, graph_name

    if name.startswith(("http://", "https://", "urn:")):
        iri = ox.NamedNode(name)
        if iri in OWNERS:
            short = graph_name(iri)
            raise ProtectedGraphError(
                f"<{name}> is TechKG's own {short!r} graph ({graph_kind(iri)}-owned); kg import rdf never replaces it",
                hint=f"Load the file into an import graph of its own: --graph import/{short}")
        return iri
    short = name.removeprefix("import/").strip("/")
    if not short:
        raise ProtectedGraphError("an import graph needs a name", hint="For example: --graph import/orkg")
    if not name.startswith("import/") and name in SOURCES:
        kind = graph_kind(SOURCES[name])
        raise ProtectedGraphError(
            f"{name!r} is TechKG's own graph ({kind}-owned: "
            + {"package": "built from TechKG's files by kg build", "user": "your own data",
               "internal": "TechKG's bookkeeping", "source": "refreshed from its source"}[str(kind)]
            + "); kg import rdf never replaces it",
            hint=f"Load the file into an import graph of its own: --graph import/{name}")
    return ox.NamedNode(IMPORT_PREFIX + short)
