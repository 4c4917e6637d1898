"""``kg reading``: the reading list with current statuses, and status changes."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

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
    wide: Annotated[bool, typer.Option("--wide", help="Also the venue and when the status changed (shown "
                                       "anyway on a terminal of 120 columns or more).")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """The reading list with each paper's current status, the techniques it introduces, extends, uses or
    evaluates (kg links), its note and the time of its last change."""
    from kg.cli.output import console, emit, emit_stream, reader_gone, terminal_width

    fmt = pick_format(fmt)
    store = state().reader()
    # a wide terminal has room for every column (asked without rich, which a CSV does not need)
    wide = wide or (fmt is Format.table and terminal_width(sys.stdout) >= 120)
    if status:
        status = _listed_status(store, status)
    rows, linked = _listed(store, status, category)
    for r in rows:
        techniques = linked.get(str(r["paper"]), [])
        r["techniques"] = techniques if fmt is Format.json else ", ".join(t["name"] for t in techniques)
        if fmt is Format.table:
            r["changed"] = _local_time(r["changed"])
            r["title"] = r["label"]
            r["note"] = r["note"] or ("📝" if r["has_note"] else "")  # flagged in the list, text not synced
            r["categories"] = ("\n" if wide else "; ").join(str(c) for c in r["categories"])
    if fmt is not Format.table:
        emit(rows, ["status", "title", "techniques", "categories", "venue", "note", "changed", "has_note", "paper"],
             fmt=fmt)
        return
    columns = ["status", "title", "techniques", "categories", "venue", "note", "changed"] if wide else \
        ["status", "title", "techniques", "categories", "note"]
    what = " ".join(x for x in (f"{status!r}" if status else "", f"in {category!r}" if category else "") if x)
    suffix = f" {what}" if what else ""
    try:  # (a long list printed as its rows come: rich lays out every row first, 25 s for 61k papers)
        emit_stream(rows, columns, title=lambda n: f"Reading list: {_papers(n)}{suffix}",
                    streamed_title=f"Reading list{suffix}", footer=_papers,
                    short={"note": 48 if wide else 36, "techniques": 40 if wide else 24})
    except BrokenPipeError:
        reader_gone()
        return
    if not rows:
        console().print("[dim]No paper matches. List every paper with: kg reading list[/]" if status or category
                        else "[dim]The reading list is empty: kg build seeds it, kg import reading-list FILE "
                        "replaces it, kg reading set TITLE STATUS --add adds a paper.[/]")
    elif not wide:
        console().print("[dim]--wide adds the venue and when each status changed.[/]")


def _listed(store: Any, status: str | None, category: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The list's rows and each paper's techniques: from fresh analytics tables (brought up to
    date first at arXiv scale), else from the store."""
    from kg.analytics.lookups import techniques_of
    from kg.answer import records
    from kg.cli.analytics import refresh_tables
    from kg.linking import listing
    from kg.reading import listed_rows
    from kg.resolve import Resolver

    params = {name: value for name, value in (("status", status), ("category", category)) if value}
    rows = listed_rows(records(store, "reading-list", params, Resolver(store), refresh=refresh_tables))
    papers = [str(r["paper"]) for r in rows]
    linked = techniques_of(store, papers)
    return rows, linked if linked is not None else listing.techniques_of(store, papers)


def _papers(n: int) -> str:
    from kg.wording import counted

    return counted(n, "paper")


def _listed_status(store: Any, status: str) -> str:
    """``status`` as the list stores it: a known status (or an alias), or a status of one's own
    that some paper has; anything else is refused with the statuses there are."""
    from kg.errors import StatusError
    from kg.reading import KNOWN_STATUSES, known_status, status_slug

    known = known_status(status)
    if known is not None:
        return known
    rows = store.select("""SELECT DISTINCT ?slug WHERE { ?p tkg:readingStatus ?s
                           BIND(REPLACE(STR(?s), "^.*/status/", "") AS ?slug) }""")
    in_use = sorted({str(r["slug"]) for r in rows.records()} - set(KNOWN_STATUSES))
    if status_slug(status) in {status_slug(s) for s in in_use}:
        return status
    valid = [*KNOWN_STATUSES, *in_use]
    raise StatusError(f"{status!r} is not a reading status of this list",
                      hint=f"Use one of: {', '.join(valid)}.")


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
    from kg.errors import KGError, NotFoundError
    from kg.iris import looks_like_arxiv_id, paper_iri, paper_label, parse_arxiv_id, slugify
    from kg.reading import add_paper, paper_known, paper_title, parse_status, resolve_paper, set_status

    fmt = pick_format(fmt)
    value = parse_status(status, custom=custom)  # a typo fails before the store is opened
    store = state().store()
    try:
        node, title = resolve_paper(store, paper), None
    except NotFoundError:
        if not add or paper.startswith(("http://", "https://")):
            raise
        if looks_like_arxiv_id(paper):  # a mistyped id, not a title: never add it as a paper
            try:
                parse_arxiv_id(paper)
            except ValueError as exc:
                raise KGError(str(exc), hint="Nothing was added. Check the id on arxiv.org, or give the "
                              "paper's title in quotes to add a paper without an arXiv id.") from None
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
    record = {"paper": node.value, "title": title or paper_title(store, node), "previous": change.previous,
              "status": change.status, "added": added,
              "at": change.at.isoformat(), "via": change.via}
    if emit_machine(fmt, record, [record], list(record)):
        return
    from rich.markup import escape

    out = console()
    out.print(f"{escape(paper_label(node.value, title or paper_title(store, node)))}: {before} → "
              f"[bold]{change.status}[/]")
    if added:
        out.print("Added as a new paper" + ("." if title else ", marked as needing metadata "
                                            "(kg ingest arxiv fills it in)."))
