"""``kg news``: the papers new since your last look, linked to the techniques you follow."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state

if TYPE_CHECKING:
    from kg.news import NewsReport

__all__ = ["register"]


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


def markdown(report: NewsReport) -> str:
    """A digest to paste or mail: the new papers grouped by technique, best first."""
    lines = [f"# What's new since {report.since_label}", ""]
    if not report.items:
        lines.append("Nothing new for the techniques you follow.")
        return "\n".join(lines) + "\n"
    order: dict[str, list[Any]] = {}
    for item in report.items:
        order.setdefault(item.technique_name, []).append(item)
    for technique, items in order.items():
        lines += [f"## {technique}", ""]
        for item in items:
            meta = ", ".join(x for x in (item.date[:10], item.venue or "",
                                         f"{item.citations} citations" if item.citations else "") if x)
            title = item.title.replace("[", "(").replace("]", ")")
            lines.append(f"- **[{title}]({item.link})** ({meta}): {item.reason}.")
        lines.append("")
    lines.append(f"{len(report.items)} of {report.total} new paper(s); made by TechKG (kg news -f markdown).")
    return "\n".join(lines) + "\n"


def news(
    since: Annotated[Optional[str], typer.Option(  # noqa: UP045 - typer needs Optional
        "--since", "-s", help="From when: a duration (7d, 2w, 36h), a date (2026-05-01) or last (your last look, "
                              "the default; a week ago before the first).", show_default=False)] = None,
    technique: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--technique", "-t", help="Only this technique (followed or not).", show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="How many papers.")] = 30,
    seen: Annotated[bool, typer.Option("--seen", help="Mark the papers shown as seen and record this look: the "
                                                      "next kg news starts from now.")] = False,
    include_seen: Annotated[bool, typer.Option("--all", help="Also show papers marked seen before.")] = False,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format: table, json, csv or markdown (a "
                                                               "digest to paste or mail).")] = Format.table,
) -> None:
    """Papers new since your last look (or --since) that are linked to the techniques you follow, with the
    evidence of the link and a reason, ranked by link strength, relation (introduces and extends first),
    influence and recency. --seen records this look."""
    from kg.cli.output import console, emit, emit_json
    from kg.news import mark_seen
    from kg.news import news as run

    state().json_errors = fmt is Format.json
    store = state().store() if seen else state().reader()
    node = None
    if technique:
        from kg.resolve import resolve_technique

        node = resolve_technique(store, technique)
    report = run(store, since=since, technique=node, limit=limit, include_seen=include_seen)
    marked = mark_seen(store, [i.paper for i in report.items]) if seen else None
    if fmt is Format.json:
        emit_json({"since": report.since.isoformat(), "since_label": report.since_label,
                   "last_look": report.last_look.isoformat() if report.last_look else None,
                   "followed": [{"technique": t, "name": n, "inferred": i} for t, n, i in report.followed],
                   "total": report.total, "marked_seen": marked, "papers": [i.as_dict() for i in report.items]})
        return
    if fmt is Format.markdown:
        print(markdown(report), end="")
        return
    rows = [{"rank": n, "title": i.title, "date": i.date[:10], "technique": i.technique_name,
             "relation": i.verb, "score": f"{i.score:.2f}", "reason": i.reason, "link": i.link, "paper": i.paper}
            for n, i in enumerate(report.items, start=1)]
    if fmt is Format.csv:
        emit(rows, ["rank", "title", "date", "technique", "relation", "score", "reason", "link", "paper"], fmt="csv")
        return
    out = console()
    if not report.followed:
        out.print("You follow no technique yet, and none can be inferred (no paper on your reading list is a "
                  "technique's): kg follow TECHNIQUE, or kg news --technique NAME.", highlight=False)
        return
    if rows:
        emit(rows, ["rank", "title", "date", "technique", "score", "reason"], lines=True,
             title=f"New since {report.since_label}: {len(rows)} of {report.total} paper(s)")
    else:
        out.print(f"Nothing new since {report.since_label}.", highlight=False)
    if report.inferred:
        out.print("[dim]You follow no technique explicitly: these are the techniques of your reading list.[/]")
    if marked is not None:
        out.print(f"[green]{marked} paper(s) marked seen[/]; the next kg news starts from now.")
    elif rows:
        out.print("[dim]kg news --seen marks them seen.[/]")


def register(app: typer.Typer) -> None:
    app.command("news")(news)
