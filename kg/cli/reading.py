"""``kg reading``: the reading list with current statuses, and status changes."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kg.cli import state

__all__ = ["app"]

app = typer.Typer(help="List the reading list or change a paper's reading status.", no_args_is_help=True)


@app.command("list")
def list_(
    status: Annotated[
        Optional[str], typer.Option(help="Only this status: to-read, reading, read, skipped, ...")  # noqa: UP045
    ] = None,
    category: Annotated[Optional[str], typer.Option(help="Only categories containing this text.")] = None,  # noqa: UP045
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")] = "table",
) -> None:
    """The reading list with each paper's current status."""
    from kg.cli.output import emit
    from kg.reading import reading_rows

    state().json_errors = fmt == "json"
    rows = reading_rows(state().reader(), status=status, category=category)
    for r in rows:
        r["changed"] = str(r["changed"] or "")[:10]
    emit(rows, ["status", "title", "categories", "venue", "note", "changed"], fmt=fmt,
         title=f"Reading list: {len(rows)} papers")


@app.command("set")
def set_(
    paper: Annotated[str, typer.Argument(help="Title (or part of it), arXiv id or IRI of the paper.")],
    status: Annotated[str, typer.Argument(help="to-read, reading, read, skipped, or any custom status.")],
) -> None:
    """Change a paper's reading status (recorded with its date; the next Zotero sync picks it up)."""
    from kg.cli.output import console
    from kg.reading import resolve_paper, set_status

    store = state().store()
    node = resolve_paper(store, paper)
    change = set_status(store, node, status, via="cli")
    before = change.previous or "no status"
    console().print(f"{node.value}: {before} → [bold]{change.status}[/]")
