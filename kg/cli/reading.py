"""``kg reading``: the reading list with current statuses, and status changes."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt, pick_format

__all__ = ["app"]

app = typer.Typer(help="List the reading list or change a paper's reading status.", no_args_is_help=True)


@app.command("list")
def list_(
    status: Annotated[
        Optional[str], typer.Option(help="Only this status: to-read, reading, read, skipped, ...")  # noqa: UP045
    ] = None,
    category: Annotated[Optional[str], typer.Option(help="Only categories containing this text.")] = None,  # noqa: UP045
    fmt: FormatOpt = Format.table,
) -> None:
    """The reading list with each paper's current status, the techniques it introduces, extends, uses or
    evaluates (kg links), its note and the time of its last change."""
    from kg.cli.output import emit
    from kg.linking.listing import techniques_of
    from kg.reading import reading_rows

    fmt = pick_format(fmt)
    store = state().reader()
    rows = reading_rows(store, status=status, category=category)
    linked = techniques_of(store, [str(r["paper"]) for r in rows])
    for r in rows:
        techniques = linked.get(str(r["paper"]), [])
        r["techniques"] = techniques if fmt is Format.json else ", ".join(t["name"] for t in techniques)
        if fmt is Format.table:
            r["changed"] = _local_time(r["changed"])
            r["note"] = r["note"] or ("📝" if r["has_note"] else "")  # flagged in the list, text not synced
    columns = ["status", "title", "techniques", "categories", "venue", "note", "changed"]
    if fmt is not Format.table:
        columns += ["has_note", "paper"]
    emit(rows, columns, fmt=fmt, title=f"Reading list: {len(rows)} papers", short={"note": 48, "techniques": 40})


def _local_time(value: object) -> str:
    """An xsd:dateTime as the reader's local time to the minute: 2026-03-04 17:05."""
    import datetime as dt

    if not value:
        return ""
    moment = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


@app.command("set")
def set_(
    paper: Annotated[str, typer.Argument(help="Title (or part of it), arXiv id or IRI of the paper.")],
    status: Annotated[str, typer.Argument(help="to-read, reading, read or skipped (or your own, with --custom).")],
    custom: Annotated[bool, typer.Option("--custom", help="Keep STATUS as a status of your own.")] = False,
    add: Annotated[bool, typer.Option(
        "--add", help="Add the paper if the graph does not hold it (marked as needing metadata: "
        "kg ingest arxiv fills it in).")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Change a paper's reading status (recorded with its date; the next Zotero sync picks it up)."""
    from kg.cli.output import console, emit_machine
    from kg.errors import NotFoundError
    from kg.iris import paper_iri, slugify
    from kg.reading import add_paper, paper_known, parse_status, resolve_paper, set_status

    fmt = pick_format(fmt)
    value = parse_status(status, custom=custom)  # a typo fails before the store is opened
    store = state().store()
    try:
        node, title = resolve_paper(store, paper), None
    except NotFoundError:
        if not add or paper.startswith(("http://", "https://")):
            raise
        node, title = paper_iri(key=slugify(paper)[:80]), paper.strip()
    if paper_known(store, node):
        change, added = set_status(store, node, value, via="cli"), False
    elif add:
        change, added = add_paper(store, node, value, title=title, via="cli"), True
    else:
        raise NotFoundError(f"the graph holds no paper {paper!r} ({node.value})",
                            hint="Check the id; or pass --add to add it as a new paper (marked as needing "
                            "metadata: kg ingest arxiv fills in its title and authors).")
    from kg.cli.search import keep_index_current
    from kg.graphs import READING

    keep_index_current(store, papers=[node.value], graphs=[READING])
    before = change.previous or "no status"
    record = {"paper": node.value, "previous": change.previous, "status": change.status, "added": added,
              "at": change.at.isoformat(), "via": change.via}
    if emit_machine(fmt, record, [record], list(record)):
        return
    out = console()
    out.print(f"{node.value}: {before} → [bold]{change.status}[/]")
    if added:
        out.print("Added as a new paper" + ("." if title else ", marked as needing metadata "
                                            "(kg ingest arxiv fills it in)."))
