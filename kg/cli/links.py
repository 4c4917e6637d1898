"""``kg link`` and ``kg links``: papers linked to the techniques they introduce, extend, use,
evaluate or mention, with evidence, and the reader's verdicts on the links."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperGroup

from kg.cli import state
from kg.cli.output import Format, FormatOpt, pick_format
from kg.wording import counted

if TYPE_CHECKING:
    from pyoxigraph import NamedNode

    from kg.linking.apply import LinkReport
    from kg.linking.listing import LinkRow
    from kg.store.base import GraphStore

__all__ = ["Relinked", "app", "register", "relinking"]


class _ListByDefault(TyperGroup):
    """``kg links GQA`` and ``kg links --relation uses`` list links: anything that is not a
    subcommand's name goes to ``list``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = ["list", *args]
        parsed: list[str] = super().parse_args(ctx, args)
        return parsed


app = typer.Typer(cls=_ListByDefault, help="List the paper-technique links with their evidence; accept, reject or "
                                           "add links; set the score from which queries see automatic links.")


class Relation(StrEnum):
    introduces = "introduces"
    extends = "extends"
    uses = "uses"
    evaluates = "evaluates"
    mentions = "mentions"


class Status(StrEnum):
    auto = "auto"
    accepted = "accepted"
    rejected = "rejected"
    manual = "manual"


def _evidence(row: LinkRow, lines: int) -> str:
    items = row.link.evidence[:lines]
    rest = len(row.link.evidence) - len(items)
    text = "\n".join(f"{e.field}: {e.text}" for e in items)
    return text + (f"\n(+{rest} more)" if rest > 0 else "")


def _table_row(row: LinkRow, lines: int) -> dict[str, Any]:
    link = row.link
    return {"id": row.id, "technique": row.technique_name or link.technique, "relation": link.relation,
            "score": f"{link.score:.2f}", "status": link.status + ("" if row.shown else " (hidden)"),
            "paper": row.paper_title or link.paper, "read": row.reading_status or "", "evidence": _evidence(row, lines)}


def _target(store: GraphStore, target: str) -> tuple[str | None, str | None]:
    """(technique IRI, paper IRI): ``target`` as a technique, else as a paper the graph holds."""
    from kg.errors import NotFoundError
    from kg.reading import paper_known, resolve_paper
    from kg.resolve import resolve_technique

    try:
        return resolve_technique(store, target).value, None
    except NotFoundError as as_technique:
        try:
            paper = resolve_paper(store, target)
        except NotFoundError as as_paper:
            hints = [*as_technique.suggestions, *as_paper.suggestions][:5]
            raise NotFoundError(f"no technique or paper is called {target!r}", suggestions=hints,
                                hint=None if hints else "Give a technique's name or a paper's title, arXiv id or "
                                "IRI (kg stats --techniques lists the techniques).") from None
        if not paper_known(store, paper):
            raise NotFoundError(f"the graph holds no technique or paper {target!r}",
                                suggestions=as_technique.suggestions) from None
        return None, paper.value


@app.command("list")
def list_(
    target: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        metavar="[TECHNIQUE|PAPER]", help="Only the links of this technique (name, alias, id) or paper (title, "
                                          "arXiv id, IRI).", show_default=False)] = None,
    relation: Annotated[Optional[Relation], typer.Option(  # noqa: UP045
        "--relation", "-r", help="Only links of this relation.", show_default=False)] = None,
    status: Annotated[Optional[Status], typer.Option(  # noqa: UP045
        "--status", "-s", help="Only links of this status: auto (found by kg link), accepted, rejected, manual "
                               "(added by you or the catalog's primary paper).", show_default=False)] = None,
    min_score: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--min-score", min=0.0, max=1.0, help="Only links scoring at least this (0 to 1).", show_default=False)] = None,
    lines: Annotated[int, typer.Option("--evidence", min=1, help="Evidence lines to show per link.")] = 2,
    fmt: FormatOpt = Format.table,
) -> None:
    """Links between papers and techniques, strongest relation first: each with its id, relation, score, status
    (hidden: below your threshold, so queries do not see it) and evidence. JSON rows hold paper, technique,
    relation, score, status and evidence [{field, text, source}]."""
    from kg.cli.output import console, emit_csv, emit_json_items, emit_stream, reader_gone

    fmt = pick_format(fmt)
    store = state().reader()
    technique, paper = _target(store, target) if target else (None, None)
    parts = _parts(store, fmt, technique=technique, paper=paper, relation=relation.value if relation else None,
                   status=status.value if status else None, min_score=min_score)
    rows = (row for part in parts for row in part)
    automatic = False

    def shown(width: int) -> Iterator[dict[str, Any]]:
        nonlocal automatic
        for row in rows:
            automatic = automatic or row.link.status == "auto"
            yield {**_table_row(row, width), "paper_iri": row.link.paper, "technique_iri": row.link.technique}

    columns = ["id", "technique", "relation", "score", "status", "paper", "read", "evidence"]
    of = f" of {target}" if target else ""
    try:  # (each part written as it comes)
        if fmt is Format.json:
            emit_json_items(row.as_dict() for row in rows)
        elif fmt is Format.csv:
            emit_csv(shown(100), [*columns, "paper_iri", "technique_iri"])
        else:
            emit_stream(shown(lines), columns, title=lambda n: f"{counted(n, 'link')}{of}",
                        streamed_title=f"Links{of}, strongest relation first",
                        footer=lambda n: f"{counted(n, 'link')}{of}")
    except BrokenPipeError:
        reader_gone()
        return
    if automatic and fmt is Format.table:
        console().print("[dim]Accept one with kg links accept ID, reject it with kg links reject ID.[/]")


def _parts(store: GraphStore, fmt: Format, **narrowing: Any) -> Iterator[list[LinkRow]]:
    """The links in parts (:func:`kg.linking.listing.iter_links`), each under a progress bar
    (a table's, on a terminal) while it is read."""
    from kg.cli.output import progress_bar
    from kg.linking.listing import iter_links

    current: list[tuple[Any, Any]] = []

    def told(relation: str, done: int) -> None:
        for bar, task in current:
            bar.update(task, description=f"reading the {relation} links", completed=done)

    parts = iter_links(store, progress=told, **narrowing)
    while True:
        with progress_bar(show=fmt is Format.table) as bar:
            current[:] = [(bar, bar.add_task("reading the links", total=None))]
            part = next(parts, None)
        current.clear()
        if part is None:
            return
        yield part


def _find(store: GraphStore, ident: str) -> LinkRow:
    from kg.errors import NotFoundError
    from kg.linking.listing import find_link

    found = find_link(store, ident)
    if found is None:
        raise NotFoundError(f"there is no link {ident!r}",
                            hint="Link ids look like ln-1a2b3c4d5e6f7a8b (a unique start of 6 or more digits "
                                 "will do); kg links TECHNIQUE lists them.")
    return found


def _print_decision(row: Any, decision: Any, fmt: Format, verb: str) -> None:
    from kg.cli.output import console, emit, emit_json

    record = {**decision.as_dict(), "title": row.get("title"), "technique_name": row.get("technique_name")}
    if fmt is Format.json:
        emit_json(record)
        return
    if fmt is Format.csv:
        emit([{**record, "evidence": "; ".join(e["text"] for e in record["evidence"])}],
             ["id", "status", "relation", "score", "paper", "technique", "title", "technique_name", "at",
              "evidence"], fmt="csv")
        return
    from rich.markup import escape

    name = escape(str(record["technique_name"] or decision.technique))
    paper = escape(str(record["title"] or decision.paper))
    says = {"accepted": "queries see it as yours; kg link keeps it whatever the text says later",
            "rejected": "it will not come back", "manual": "queries see it; kg link keeps it"}[decision.status]
    console().print(f"[green]{verb}[/] {paper} [bold]{decision.relation}[/] {name} ({decision.id}): {says}.")


def _index_paper(store: GraphStore, paper: str) -> None:
    """The search index after a verdict: the paper's document (its techniques) made again."""
    from kg.cli.search import keep_index_current
    from kg.graphs import LINK_DECISIONS, LINKS

    keep_index_current(store, papers=[paper], graphs=[LINKS, LINK_DECISIONS])


def _decide(ident: str, status: str, relation: str | None, fmt: Format) -> None:
    from kg.errors import KGError
    from kg.linking.decisions import check_relation, decide

    fmt = pick_format(fmt)
    chosen = check_relation(relation) if relation else None
    store = state().store()
    row = _find(store, ident)
    if row.link.status == "manual" and any(e.field == "catalog" for e in row.link.evidence):
        if status == "rejected":
            raise KGError(f"{row.id} is the catalog's: {row.paper_title or row.link.paper} is the primary paper of "
                          f"{row.technique_name}", hint="Change the technique's `paper` in the catalog files "
                                                        "(docs/catalog-format.md) and run kg build.")
    decision = decide(store, row.link, status, relation=chosen)
    _index_paper(store, row.link.paper)
    _print_decision({"title": row.paper_title, "technique_name": row.technique_name}, decision, fmt, status)


@app.command("accept")
def accept(
    ident: Annotated[str, typer.Argument(metavar="ID", help="The link's id, as kg links shows it.")],
    relation: Annotated[Optional[Relation], typer.Option(  # noqa: UP045
        "--as", help="The relation to keep (default: the one the evidence reads).", show_default=False)] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Accept a link: queries see it from your link-decisions graph, whatever its score, and kg link keeps it even
    when the paper's text changes."""
    _decide(ident, "accepted", relation.value if relation else None, fmt)


@app.command("reject")
def reject(
    ident: Annotated[str, typer.Argument(metavar="ID", help="The link's id, as kg links shows it.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Reject a link: queries no longer see it, and kg link never brings it back."""
    _decide(ident, "rejected", None, fmt)


@app.command("add")
def add(
    paper: Annotated[str, typer.Argument(help="The paper: title (or part of it), arXiv id or IRI.")],
    technique: Annotated[str, typer.Argument(help="The technique: name, alias or id.")],
    relation: Annotated[Relation, typer.Option("--as", help="How the paper relates to the technique.")],
    note: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--note", help="Why (kept as the link's evidence).", show_default=False)] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Add a link of your own (status manual), kept in your link-decisions graph: kg build and kg link never
    replace it."""
    from kg.errors import NotFoundError
    from kg.linking.decisions import decide
    from kg.linking.listing import list_links
    from kg.linking.model import Link
    from kg.reading import paper_known, resolve_paper
    from kg.resolve import resolve_technique

    fmt = pick_format(fmt)
    store = state().store()
    node = resolve_technique(store, technique)
    found = resolve_paper(store, paper)
    if not paper_known(store, found):
        raise NotFoundError(f"the graph holds no paper {paper!r}",
                            hint="Add it first (kg reading set ID to-read --add, or kg ingest arxiv ID).")
    existing = list_links(store, paper=found.value, technique=node.value)
    link = existing[0].link if existing else Link(found.value, node.value, relation.value, 1.0)
    decision = decide(store, link, "manual", relation=relation.value, note=note)
    _index_paper(store, found.value)
    from kg.linking.listing import _names

    titles, names = _names(store, {found.value}, {node.value})
    _print_decision({"title": titles.get(found.value), "technique_name": names.get(node.value)}, decision, fmt,
                    "added")


@app.command("threshold")
def threshold_(
    value: Annotated[Optional[float], typer.Argument(  # noqa: UP045
        help="The least score of an automatic link that queries see (0 to 1). Without it: show the threshold.",
        show_default=False)] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Show or set the score from which queries see automatic links (0.5 until you set one); kept in your
    link-decisions graph. Links you accepted or added are seen whatever their score."""
    from kg.cli.output import console, emit_machine
    from kg.linking.decisions import set_threshold, threshold

    fmt = pick_format(fmt)
    if value is None:
        now = threshold(state().reader())
        if not emit_machine(fmt, {"threshold": now}):
            console().print(f"threshold {now:.2f}: queries see automatic links scoring at least this")
        return
    old, removed, added = set_threshold(state().store(), value)
    from kg.cli.search import keep_index_current

    keep_index_current(state().store())  # the links graph followed to the papers whose links came or went
    record = {"threshold": value, "previous": old, "hidden": removed, "shown": added}
    if not emit_machine(fmt, record):
        console().print(f"threshold {old:.2f} → [bold]{value:.2f}[/]: {added} automatic links now seen by queries, "
                        f"{removed} no longer")


def link(fmt: FormatOpt = Format.table) -> None:
    """Link every paper to the techniques it introduces, extends, uses, evaluates or mentions, from its title,
    abstract, TLDR, citations, reading-list texts and Zotero tags and notes; replace the links graph (your
    verdicts in link-decisions stay). A killed run leaves the links as they were."""
    from kg.cli.output import console, emit_machine, progress_bar
    from kg.linking.apply import link_everything

    fmt = pick_format(fmt)
    store = state().store()
    with progress_bar("[bold]{task.description}", show=fmt is Format.table) as bar:
        task = bar.add_task("reading the papers", total=None)

        def progress(step: str, done: int, total: int) -> None:
            label = {"linking": "linking papers", "reading": "reading the file to load", "loading": "loading links",
                     "comparing": "comparing with the links there", "removing": "removing old links",
                     "adding": "adding new links"}.get(step, f"reading {step.replace('-', ' ')}s")
            bar.update(task, description=label, completed=done, total=total or None)

        report = link_everything(store, progress=progress)
    from kg.cli.search import keep_index_current

    keep_index_current(store)  # the links graph followed to its papers (or the index made again)
    if not emit_machine(fmt, report.as_dict()):
        _print_link_report(report, console())


def _print_link_report(report: LinkReport, out: Any) -> None:
    relations = ", ".join(f"{n} {r}" for r, n in report.relations.items()) or "none"
    statuses = ", ".join(f"{n} {s}" for s, n in report.statuses.items()) or "none"
    out.print(f"[bold]Linked[/] {report.papers:,} papers to {report.techniques} techniques")
    out.print(f"  links       {report.links:,}: {relations}")
    out.print(f"  statuses    {statuses}")
    out.print(f"  seen        {report.shown:,} by queries (kg links threshold sets the least score)")


@dataclass
class Relinked:
    """What :func:`relinking` changed, for the search index that follows: the papers linked
    again, and ``links`` in ``graphs`` when those papers are all it changed there (empty
    after a whole run: the index then follows the graph itself)."""

    papers: list[str] = field(default_factory=list)
    graphs: list[NamedNode] = field(default_factory=list)


@contextmanager
def relinking(graphs: Sequence[NamedNode], *, label: str, names: bool = False, enabled: bool = True
              ) -> Iterator[Relinked]:
    """Around a command that writes ``graphs``: afterwards, link the papers it changed (and,
    with ``names``, what a change of techniques or names concerns) in a transaction of their
    own, and say so on stderr. A failure there leaves the command's own write standing."""
    done = Relinked()
    if not enabled:
        yield done
        return
    from kg.errors import KGError
    from kg.linking.refresh import Watch

    store = state().store()
    watch = Watch(store, graphs, names=names)
    yield done
    try:
        report = watch.relink(label=label)
    except KGError as error:
        print(f"links not updated: {error.message} (kg link makes them again)", file=sys.stderr)
        return
    if not report.whole:
        from kg.graphs import LINKS

        done.papers, done.graphs = list(report.changed), [LINKS]
    if report.whole or report.added or report.removed:
        what = f"{report.papers:,} papers" if report.whole else f"{report.papers:,} changed papers"
        print(f"linked {what} to techniques: {report.links:,} links, {report.shown:,} seen by queries"
              + ("" if report.whole else f" ({report.added:,} triples added, {report.removed:,} removed)"),
              file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("link")(link)
