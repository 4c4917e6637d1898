"""``kg sync zotero``: the two-way sync of the reading list with a Zotero library, and
``kg ingest zotero``, which reads a library into the graph without writing to it."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.ingest import ContactOpt, FormatOpt, TimeoutOpt
from kg.cli.ingest import _progress as progress_bar
from kg.cli.ingest import app as ingest_app
from kg.cli.output import Format

if TYPE_CHECKING:
    from ingest.zotero import ZoteroAPI
    from ingest.zotero_sync import SyncOptions, SyncReport

__all__ = ["app"]

app = typer.Typer(help="Two-way sync of the reading list with other tools (Zotero).", no_args_is_help=True)
zotero_app = typer.Typer(
    help="Sync the reading list with a Zotero library, both ways: statuses, notes, categories "
         "(collections), tags and new papers. Run with no subcommand to sync.",
    invoke_without_command=True)
app.add_typer(zotero_app, name="zotero")


class Conflict(StrEnum):
    newest = "newest"
    zotero = "zotero"
    graph = "graph"


class StatusFormat(StrEnum):
    extra = "extra"
    tags = "tags"
    both = "both"


LibraryOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045 - typer needs Optional
    "--library", "-l", envvar="ZOTERO_LIBRARY",
    help="The library: user:<userID> or group:<groupID> (or ZOTERO_LIBRARY).", show_default=False)]
ZoteroUrlOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--api-url", envvar="ZOTERO_API_URL",
    help="Zotero API base URL (default https://api.zotero.org; a self-hosted or local server).",
    show_default=False)]
StatusFormatOpt = Annotated[StatusFormat, typer.Option(
    "--status-format", help="How Zotero holds the reading status: 'extra' (the zotero-reading-list plugin's "
                            "Read_Status lines), 'tags' (status/read ...) or 'both'.")]
MapOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--map", help="Map a Zotero collection to a reading-list category: 'Zotero name=Category'. Repeatable; "
                  "unmapped collections keep their names.", show_default=False)]


def _options(*, conflict: str = "newest", status_format: str = "extra", mapping: list[str] | None = None,
             dry_run: bool = False, create: bool = True) -> SyncOptions:
    from ingest.zotero_sync import SyncOptions
    from kg.errors import SyncError

    pairs: dict[str, str] = {}
    for raw in mapping or []:
        zotero_name, sep, label = raw.partition("=")
        if not sep or not zotero_name.strip() or not label.strip():
            raise SyncError(f"--map {raw!r} is not 'Zotero name=Category'",
                            hint="Write it like --map 'Distributed Training=LLM Training / Distributed Training'.")
        pairs[zotero_name.strip()] = label.strip()
    return SyncOptions(conflict=conflict, status_format=status_format, collections=pairs, dry_run=dry_run,
                       create_items=create)


def _api(library: str | None, api_url: str | None, contact: str | None, timeout: float, *,
         need_key: bool) -> ZoteroAPI:
    from ingest.zotero import DEFAULT_API_URL, LibrarySpec, api_key, connect
    from ingest.zotero import build_client as zotero_client
    from kg.errors import SyncError

    if not library:
        raise SyncError("no Zotero library given",
                        hint="Pass --library user:<userID> or --library group:<groupID> (or set ZOTERO_LIBRARY).")
    spec = LibrarySpec.parse(library)
    key = api_key(spec)
    if key is None and need_key:
        raise SyncError(
            f"no Zotero API key for {spec}",
            hint="Create a key with write access at https://www.zotero.org/settings/keys and put it in "
                 f"ZOTERO_API_KEY, or in the keyring: keyring set techkg-zotero {spec}")
    client = zotero_client(contact=contact, timeout=timeout)
    api = connect(spec, key=key, api_url=api_url or DEFAULT_API_URL, client=client, contact=contact)
    return api


def _print(report: SyncReport, fmt: Format, *, title: str) -> None:
    from rich.markup import escape

    from kg.cli.output import console, emit, emit_json

    if fmt is Format.json:
        emit_json(report.as_dict())
        return
    rows: list[dict[str, Any]] = [
        {**c.as_dict(), "fields": ", ".join(c.fields)} for c in report.changes]
    if fmt is Format.csv:
        emit(rows, ["side", "action", "what", "title", "key", "fields"], fmt="csv")
        return
    out = console()
    counts = report.counts()
    verb = "would be" if report.dry_run else "were"
    out.print(f"[bold]{escape(title)}[/] {escape(report.library)}: library version "
              f"{report.version_before} → {report.version_after}"
              + (" [yellow](dry run: nothing was written)[/]" if report.dry_run else ""))
    if rows:
        emit(rows, ["side", "action", "what", "title", "fields"], title=f"Changes that {verb} made")
    else:
        out.print("  nothing to change on either side")
    if report.conflicts:
        emit([{**c.as_dict(), "kept": c.winner, "lost": _short(c.losing_value)} for c in report.conflicts],
             ["title", "field", "kept", "rule", "lost"], title="Conflicts (the losing values are kept)")
    for line in report.duplicates:
        out.print(f"  [yellow]duplicate[/] {escape(line)}")
    for item, error in report.failed:
        out.print(f"  [red]failed[/] {escape(item)}: {escape(error)}")
    out.print(f"  Zotero: {counts['zotero_created']} created, {counts['zotero_updated']} updated, "
              f"{counts['zotero_trashed']} trashed · graph: {counts['graph_created']} added, "
              f"{counts['graph_updated']} updated, {counts['graph_removed']} removed · "
              f"{counts['conflicts']} conflicts · {report.requests} requests in {report.seconds:.2f}s")


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else ("(none)" if value is None else str(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _run(api: ZoteroAPI, options: SyncOptions, fmt: Format, *, pull: bool) -> SyncReport:
    from ingest.zotero_sync import ingest, sync
    from kg.cli.links import relinking
    from kg.graphs import ZOTERO

    store = state().store()
    label = f"reading Zotero {api.library}" if pull else f"syncing with Zotero {api.library}"
    with relinking([ZOTERO], label="kg sync zotero (links)", enabled=not options.dry_run) as linked, \
            progress_bar(label, fmt) as update:
        def progress(stage: str, done: int, total: int) -> None:
            update(done, total)

        try:
            report = ingest(store, api, options=options, progress=progress) if pull else sync(
                store, api, options, progress=progress)
        finally:
            api.close()
    if not options.dry_run:
        from kg.cli.search import keep_index_current

        # the zotero and reading graphs followed to their documents; the papers linked again
        keep_index_current(store, papers=linked.papers, graphs=linked.graphs)
    return report


@zotero_app.callback()
def zotero(
    ctx: typer.Context,
    library: LibraryOpt = None,
    api_url: ZoteroUrlOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Read both sides and print the plan: what would be "
                                                            "created, updated and deleted on each side, and the "
                                                            "conflicts. Writes nothing.")] = False,
    conflict: Annotated[Conflict, typer.Option(
        "--conflict", help="When a field changed on both sides: the newest change wins, or Zotero, or the "
                           "graph. Either way the conflict is reported and the losing value kept.")] = Conflict.newest,
    status_format: StatusFormatOpt = StatusFormat.extra,
    mapping: MapOpt = None,
    create: Annotated[bool, typer.Option("--create/--no-create", help="Create Zotero items for reading-list "
                                                                      "papers that have none.")] = True,
    contact: ContactOpt = None,
    timeout: TimeoutOpt = 30.0,
    fmt: FormatOpt = Format.table,
) -> None:
    """Sync the reading list with a Zotero library in both directions (see --help of the subcommands for
    the conflict log)."""
    if ctx.invoked_subcommand is not None:
        return
    state().json_errors = fmt is Format.json
    options = _options(conflict=conflict.value, status_format=status_format.value, mapping=mapping,
                       dry_run=dry_run, create=create)
    api = _api(library, api_url, contact, timeout, need_key=True)
    report = _run(api, options, fmt, pull=False)
    _print(report, fmt, title="Zotero sync" if not dry_run else "Zotero sync plan")


@zotero_app.command("conflicts")
def conflicts(
    library: LibraryOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """The conflicts earlier syncs decided, newest first, with the value that lost (to put it back, set it
    again: kg reading set PAPER STATUS for a status)."""
    from ingest.zotero import LibrarySpec
    from ingest.zotero_sync import conflict_rows
    from kg.cli.output import emit

    state().json_errors = fmt is Format.json
    spec = LibrarySpec.parse(library) if library else None
    rows = conflict_rows(state().reader(), spec)
    for row in rows:
        row["lost"] = _short(row["losing_value"])
        row["kept"] = row["winner"]
    columns = ["at", "title", "field", "kept", "rule", "lost", "key", "library"]
    if fmt is Format.json:
        columns += ["paper", "graph", "zotero", "base", "winner", "losing_value", "id"]
    emit(rows, columns, fmt=fmt.value, title=f"Sync conflicts: {len(rows)}")


def ingest_zotero(
    library: LibraryOpt = None,
    api_url: ZoteroUrlOpt = None,
    status_format: StatusFormatOpt = StatusFormat.extra,
    mapping: MapOpt = None,
    contact: ContactOpt = None,
    timeout: TimeoutOpt = 30.0,
    fmt: FormatOpt = Format.table,
) -> None:
    """Read a Zotero library (user or group) into the graph: items with creators, tags, collections, child
    notes, relations and reading statuses (Extra or tags), incrementally from the last version read."""
    state().json_errors = fmt is Format.json
    options = _options(status_format=status_format.value, mapping=mapping)
    api = _api(library, api_url, contact, timeout, need_key=False)
    report = _run(api, options, fmt, pull=True)
    _print(report, fmt, title="Zotero ingest")


ingest_app.command("zotero")(ingest_zotero)
