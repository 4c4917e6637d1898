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
    """The reading list with each paper's current status, note and the time of its last change."""
    from kg.cli.output import emit
    from kg.reading import reading_rows

    fmt = pick_format(fmt)
    rows = reading_rows(state().reader(), status=status, category=category)
    for r in rows:
        if fmt is Format.table:
            r["changed"] = _local_time(r["changed"])
            r["note"] = r["note"] or ("📝" if r["has_note"] else "")  # flagged in the list, text not synced
    columns = ["status", "title", "categories", "venue", "note", "changed"]
    if fmt is not Format.table:
        columns += ["has_note", "paper"]
    emit(rows, columns, fmt=fmt, title=f"Reading list: {len(rows)} papers", short={"note": 48})


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
    status: Annotated[str, typer.Argument(help="to-read, reading, read, skipped, or any custom status.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Change a paper's reading status (recorded with its date; the next Zotero sync picks it up)."""
    from kg.cli.output import console, emit_machine
    from kg.reading import resolve_paper, set_status

    fmt = pick_format(fmt)
    store = state().store()
    node = resolve_paper(store, paper)
    change = set_status(store, node, status, via="cli")
    data = {"paper": node.value, "previous": change.previous, "status": change.status,
            "at": change.at.isoformat(), "via": change.via}
    if not emit_machine(fmt, data):
        before = change.previous or "no status"
        console().print(f"{node.value}: {before} → [bold]{change.status}[/]")
