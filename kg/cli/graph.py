"""``kg graph``: the named graphs, who owns each, and dropping the ones a user may drop."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from kg.cli import state

__all__ = ["FormatOpt", "TableFormat", "YesOpt", "app", "confirm", "graph_rows", "resolve_graph"]

app = typer.Typer(help="List the named graphs with their owners, or drop an import graph.", no_args_is_help=True)


class TableFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


FormatOpt = Annotated[TableFormat, typer.Option("--format", "-f", help="Output format.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking.")]

_KIND_TEXT = {
    "package": "built from TechKG's files (kg build)",
    "user": "yours: never replaced without asking",
    "source": "refreshed from a source",
    "internal": "TechKG's bookkeeping",
}


def confirm(question: str, *, yes: bool) -> None:
    """Go on when ``yes``, or when a person at a terminal says yes; refuse otherwise."""
    import sys

    from kg.errors import KGError

    if yes:
        return
    if not sys.stdin.isatty():
        raise KGError(f"{question} Not without confirmation.", hint="Pass --yes to go ahead without being asked.")
    if not typer.confirm(question, default=False, err=True):
        raise typer.Exit(1)


def graph_rows(store: Any) -> list[dict[str, Any]]:
    """Each named graph: name, owner kind, triples, last change, by what and from what."""
    from kg.graphs import PROVENANCE, graph_kind, graph_name

    sources: dict[str, set[str]] = {}
    for row in store.select(
        f"""SELECT ?g ?src WHERE {{ GRAPH {PROVENANCE} {{
              {{ ?g prov:hadPrimarySource ?src }} UNION {{ ?g prov:wasGeneratedBy ?a . ?a prov:used ?src
                FILTER NOT EXISTS {{ ?g prov:hadPrimarySource ?any }} }} }} }}"""
    ).records():
        sources.setdefault(row["g"], set()).add(row["src"])
    rows = []
    for info in store.graph_info():
        if info.graph.value.startswith("urn:techkg:staging:"):
            continue
        kind = graph_kind(info.graph)
        rows.append({
            "graph": graph_name(info.graph), "kind": str(kind) if kind else "other",
            "triples": info.triples, "modified": (info.modified or "")[:19], "by": info.activity or "",
            "source": " ".join(sorted(sources.get(info.graph.value, ()))),
        })
    order = {"package": 0, "user": 1, "source": 2, "other": 3, "internal": 4}
    return sorted(rows, key=lambda r: (order.get(r["kind"], 5), r["graph"]))


@app.command("list")
def list_(fmt: FormatOpt = TableFormat.table) -> None:
    """Every named graph with its owner (package, user, source), size, last change and source."""
    from kg.cli.output import console, emit

    state().json_errors = fmt is TableFormat.json
    rows = graph_rows(state().reader())
    if fmt is TableFormat.table:
        for row in rows:
            row["modified"] = row["modified"][:16].replace("T", " ")
            row["source"] = " ".join(s.rsplit("/", 1)[-1] if s.startswith("file:") else s
                                     for s in row["source"].split())
    emit(rows, ["graph", "kind", "triples", "modified", "by", "source"], fmt=fmt.value,
         title=f"{len(rows)} named graphs")
    if fmt is TableFormat.table:
        out = console()
        for kind, text in _KIND_TEXT.items():
            out.print(f"[dim]{kind}: {text}[/]")


def resolve_graph(name: str) -> Any:
    """A graph named on the command line: a short name (``catalog``, ``import/orkg``,
    ``orkg`` for ``import/orkg``) or a full IRI."""
    import pyoxigraph as ox

    from kg.errors import KGError
    from kg.graphs import IMPORT_PREFIX, SOURCES, graph_iri

    try:
        if name.startswith(("http://", "https://", "urn:")):
            return ox.NamedNode(name)
        if name in SOURCES or name.startswith("import/"):
            return graph_iri(name)
        return ox.NamedNode(IMPORT_PREFIX + name)
    except ValueError:  # a space, a quote, a brace ...: no graph is named so
        stripped = name.strip()
        close = f" Did you mean {stripped!r}?" if stripped and stripped != name else ""
        raise KGError(f"{name!r} is not a graph name: a graph's name holds no spaces, quotes or braces",
                      hint="List the graphs with kg graph list." + close) from None


@app.command("drop")
def drop(
    name: Annotated[str, typer.Argument(help="The graph: import/NAME (or NAME), a source such as arxiv, or an IRI.")],
    yes: YesOpt = False,
    fmt: FormatOpt = TableFormat.table,
) -> None:
    """Drop a named graph: an import, or a source graph (ingest it again to refresh it).
    Your own graphs are dropped only after asking, and kept as a snapshot (kg undo)."""
    from kg.cli.output import console, emit_json
    from kg.errors import NotFoundError, ProtectedGraphError
    from kg.graphs import GraphKind, graph_kind, graph_name
    from kg.store.base import Activity
    from kg.wording import counted

    state().json_errors = fmt is TableFormat.json
    graph = resolve_graph(name)
    kind = graph_kind(graph)
    short = graph_name(graph)
    if kind is GraphKind.package:
        raise ProtectedGraphError(f"{short!r} is built from TechKG's own files; kg graph drop leaves it alone",
                                  hint="kg build writes it again from the catalog files.")
    if kind is GraphKind.internal:
        raise ProtectedGraphError(f"{short!r} is TechKG's record of where every graph came from",
                                  hint="It is updated by every write; there is nothing to drop.")
    store = state().store()
    size = store.count(graph)
    if size == 0:
        names = [graph_name(g) for g in store.named_graphs()]
        raise NotFoundError(f"there is no graph {short!r} (or it is empty)",
                            hint="kg graph list shows the graphs: " + ", ".join(names[:12]))
    what = "your own graph" if kind is GraphKind.user else "graph"
    confirm(f"Drop {what} {short!r} ({counted(size, 'triple')})?", yes=yes)
    with store.transaction(Activity("kg graph drop", stats={"triples": size})) as tx:
        tx.drop_graph(graph)
    from kg.cli.search import keep_index_current

    keep_index_current(store, graphs=None)
    data = {"graph": short, "kind": str(kind) if kind else "other", "triples": size,
            "snapshot": str(tx.snapshot_taken.path) if tx.snapshot_taken else None}
    if fmt is not TableFormat.table:
        emit_json(data)
        return
    out = console()
    out.print(f"Dropped {short} ({counted(size, 'triple')}).")
    if tx.snapshot_taken is not None:
        out.print(f"Your graphs as they were are kept in {tx.snapshot_taken.path}; kg undo puts them back.")
