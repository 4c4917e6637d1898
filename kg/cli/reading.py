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
    status: Annotated[str, typer.Argument(help="to-read, reading, read or skipped (or your own, with --custom).")],
    custom: Annotated[bool, typer.Option("--custom", help="Keep STATUS as a status of your own.")] = False,
    add: Annotated[bool, typer.Option(
        "--add", help="Add the paper if the graph does not hold it (marked as needing metadata: "
        "kg ingest arxiv fills it in).")] = False,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")] = "table",
) -> None:
    """Change a paper's reading status (recorded with its date; the next Zotero sync picks it up)."""
    from kg.cli.output import console, emit
    from kg.errors import NotFoundError
    from kg.iris import paper_iri, slugify
    from kg.reading import add_paper, paper_known, parse_status, resolve_paper, set_status

    state().json_errors = fmt == "json"
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
    before = change.previous or "no status"
    record = {"paper": node.value, "previous": change.previous, "status": change.status, "added": added,
              "at": change.at.isoformat()}
    if fmt != "table":
        emit([record], list(record), fmt=fmt)
        return
    out = console()
    out.print(f"{node.value}: {before} → [bold]{change.status}[/]")
    if added:
        out.print("Added as a new paper" + ("." if title else ", marked as needing metadata "
                                            "(kg ingest arxiv fills it in)."))
