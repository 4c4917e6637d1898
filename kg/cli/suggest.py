"""``kg suggest``: lineage edges and papers to read next, from citation evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt

if TYPE_CHECKING:
    from kg.analytics.suggest import Source
    from kg.suggestions import Suggestion

__all__ = ["app"]

app = typer.Typer(help="Suggest lineage edges and papers to read next from citation evidence (kg ingest citations "
                       "first); accept or reject the edges.", no_args_is_help=True)


_NO_CITATIONS = "The graph holds no citations yet: run kg ingest citations first."


def _count(n: int, noun: str) -> str:
    from kg.wording import counted

    return counted(n, noun, grouped=True)


def _source(technique: str | None, *, write: bool = False) -> Source:
    """Fresh analytics tables (else None: SPARQL answers) and what the command needs of the
    store: from the memo kg.analytics.suggest keeps when it holds (the store is not even
    opened), else from the store. Says on stderr which source answers, and why not DuckDB."""
    from kg.analytics.suggest import current_view, from_memo, from_store, store_dir
    from kg.resolve import resolve_technique

    spec = state().store_spec
    found = None if write else from_memo(spec, technique)
    if found is None:
        folder = store_dir(spec)
        view = current_view(folder) if folder is not None and not write else None
        store = state().store() if write else state().reader()
        found = from_store(store, spec, technique, resolve_technique, view=view)
    # Plain text (rich costs a tenth of a second to import, and JSON output needs none of it).
    from kg.cli.output import note

    if found.con is not None:
        note(found.note)
    else:
        assert found.store is not None  # the memo answers only from fresh tables
        note(f"answered by SPARQL on {found.store.location}: {found.note}")
    return found


def _evidence_text(item: Suggestion, lines: int) -> str:
    shown = [e.line() for e in item.evidence[:lines]]
    rest = len(item.evidence) - len(shown)
    return "\n".join(shown) + (f"\n(+{rest} more)" if rest > 0 else "")


def _row(item: Suggestion, kind: str, lines: int) -> dict[str, Any]:
    return {"kind": kind, "id": item.id, "child": item.child.name, "relation": item.existing_relation or item.relation,
            "parent": item.parent.name, "score": f"{item.score:.2f}",
            "status": {"new": "suggested", "confirmed": "confirmed by citations", "lacking": "no citation evidence",
                       "background": "cited for background only",
                       "rejected": "rejected"}[item.status] + (" (added by you)" if item.basis == "accepted" else ""),
            "evidence": _evidence_text(item, lines)}


def _print_edges(out: Any, title: str, items: list[Suggestion], lines: int, *, suggested: bool) -> None:
    """One short block per edge, at any width: the edge on its first line (with the id to
    accept it, or its status), then its evidence sentences folded under it."""
    import textwrap

    from rich.text import Text

    def fold(text: str, first: str, rest: str) -> str:
        return textwrap.fill(text, width=max(40, out.width), initial_indent=first, subsequent_indent=rest,
                             break_long_words=False, break_on_hyphens=False)

    if not items and suggested:
        out.print("Suggested lineage: none")
        return
    out.print(Text(title, style="bold"))
    for item in items:
        relation = item.existing_relation or item.relation
        edge = f"{item.child.name} {relation} {item.parent.name}"
        if suggested:
            head = f"{item.id}  {edge}  (score\u00a0{item.score:.2f})"  # the score never folds apart
        else:
            head = f"{edge}  ({_row(item, 'existing', lines)['status']})"
        out.print(fold(head, "", "  "), markup=False, highlight=False)
        for sentence in _evidence_text(item, lines).splitlines():
            out.print(fold(sentence, "    ", "      "), markup=False, highlight=False)


@app.command("lineage")
def lineage(
    technique: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        help="Only edges from or to this technique (name, alias, id or IRI).", show_default=False)] = None,
    min_score: Annotated[float, typer.Option("--min-score", min=0.0, max=1.0,
                                             help="Leave out suggestions scoring below this (0 to 1).")] = 0.0,
    existing: Annotated[bool, typer.Option("--existing/--no-existing",
                                           help="Also check the existing edges against the citations.")] = True,
    lines: Annotated[int, typer.Option("--evidence", min=1, help="Evidence sentences to show per edge.")] = 2,
    wide: Annotated[bool, typer.Option("--wide", help="Tables with a column per field (for a wide terminal), "
                                       "instead of one short block per edge.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Lineage edges between techniques that citations suggest: the later technique's paper cites the earlier's
    for its method or influentially, or its sentences name the earlier technique. Each comes with a score, the
    evidence sentences with their intents, and a relation read from the wording (else derivesFrom)."""
    from pyoxigraph import NamedNode

    from kg.analytics.suggest import lineage_facts
    from kg.cli.output import emit, emit_json
    from kg.suggestions import lineage_report

    state().json_errors = fmt is Format.json
    source = _source(technique)  # it only reads: never waits for a writer (kg ingest citations, say)
    node = NamedNode(source.technique) if source.technique else None
    try:
        report = lineage_report(source.store, node, min_score=min_score, decided=source.decisions,
                                facts=lineage_facts(source.con) if source.con else None)
    finally:
        source.close()
    checked = report.existing if existing else []
    if fmt is Format.json:
        emit_json({"technique": node.value if node else None, "citations_read": report.citations_read,
                   "suggestions": [s.as_dict() for s in report.suggestions],
                   "existing": [s.as_dict() for s in checked], "rejected": [s.as_dict() for s in report.rejected]})
        return
    columns = ["kind", "id", "child", "relation", "parent", "score", "status", "evidence"]
    if fmt is Format.csv:
        rows = [_row(s, "suggestion", 100) for s in report.suggestions] + [_row(s, "existing", 100) for s in checked]
        emit(rows, columns, fmt="csv")
        return
    from rich.markup import escape

    from kg.cli.output import console

    out = console()
    if not wide:
        _print_edges(out, f"Suggested lineage: {_count(len(report.suggestions), 'edge')}", report.suggestions,
                     lines, suggested=True)
        if checked:
            out.print()
            _print_edges(out, "Existing edges against the citations", checked, lines, suggested=False)
    elif report.suggestions:
        emit([_row(s, "suggestion", lines) for s in report.suggestions],
             ["id", "child", "relation", "parent", "score", "evidence"],
             title=f"Suggested lineage: {_count(len(report.suggestions), 'edge')}")
    else:
        out.print("Suggested lineage: none", end="\n\n" if checked else "\n")
    if wide and checked:
        emit([_row(s, "existing", lines) for s in checked], ["child", "relation", "parent", "status", "evidence"],
             title="Existing edges against the citations")
    if report.rejected:
        out.print(f"[dim]{len(report.rejected)} rejected suggestion(s) left out.[/]")
    if not source.citations:
        out.print(f"[yellow]{escape(_NO_CITATIONS)}[/]")
    elif report.suggestions:
        out.print("[dim]Accept one with kg suggest accept ID [--as RELATION]; reject it with kg suggest reject "
                  "ID.[/]")


def _decide(ident: str, relation: str | None, verdict: str, fmt: Format) -> None:
    from rich.markup import escape

    from kg.analytics.suggest import lineage_facts, open_tables
    from kg.cli.output import console, emit_json
    from kg.decisions import accept, reject
    from kg.suggestions import find_suggestion

    state().json_errors = fmt is Format.json
    store = state().store()
    con, _note = open_tables(store)
    try:
        item = find_suggestion(store, ident, facts=lineage_facts(con) if con is not None else None)
    finally:
        if con is not None:
            con.close()
    decision = accept(store, item, relation=relation) if verdict == "accepted" else reject(store, item)
    # Tables that were fresh stay so (kg.derived: the keeper patches them), so that the next
    # kg suggest still answers from them, without opening the store (its memo written again).
    state().keep_derived()
    if con is not None:
        from kg.analytics.suggest import current_view, from_store, store_dir

        folder = store_dir(state().store_spec)
        from_store(store, state().store_spec, None, view=current_view(folder) if folder is not None else None).close()
    if fmt is Format.json:
        emit_json({**decision.as_dict(), "child_name": item.child.name, "parent_name": item.parent.name})
        return
    if fmt is Format.csv:
        from kg.cli.output import emit

        emit([{**decision.as_dict(), "evidence": "; ".join(decision.evidence)}],
             ["id", "verdict", "child", "relation", "parent", "at", "evidence"], fmt="csv")
        return
    if decision.unchanged:
        console().print(f"already accepted: {escape(item.child.name)} [bold]{decision.relation}[/] "
                        f"{escape(item.parent.name)} (on {decision.at[:10]}); nothing changed. Another relation: "
                        f"kg suggest accept {escape(item.id)} --as RELATION.")
    elif verdict == "accepted":
        console().print(f"[green]accepted[/] {escape(item.child.name)} [bold]{decision.relation}[/] "
                        f"{escape(item.parent.name)}: it is in the lineage now, marked as added by you "
                        f"(kg lineage {escape(item.child.id)}).")
    else:
        console().print(f"[yellow]rejected[/] {escape(item.child.name)} {item.relation} {escape(item.parent.name)}: "
                        "it will not be suggested again.")


@app.command("accept")
def accept_(
    ident: Annotated[str, typer.Argument(metavar="ID", help="The suggestion's id, as kg suggest lineage shows it.")],
    relation: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--as", help="The relation to record (refines, extends, combines, replaces, ..., derivesFrom); default: "
                     "the proposed one.", show_default=False)] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Accept a suggested edge: it joins the lineage (kg lineage, exports, web), marked as added by you, with its
    evidence, in the lineage-decisions graph that kg build keeps."""
    _decide(ident, relation, "accepted", fmt)


@app.command("reject")
def reject_(
    ident: Annotated[str, typer.Argument(metavar="ID", help="The suggestion's id, as kg suggest lineage shows it.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Reject a suggested edge: it is never suggested again (an edge you accepted before goes)."""
    _decide(ident, None, "rejected", fmt)


reading_app = typer.Typer(
    help="Papers not on your reading list, ranked by citation evidence towards what you follow; reject those you "
         "do not want (never suggested again).", invoke_without_command=True)
app.add_typer(reading_app, name="reading")


def _details(found: list[Any], source: Source) -> None:
    """Authors, TLDR or abstract and citation count of the papers shown, from the store."""
    from kg.readnext import paper_details, with_details

    store = source.store if source.store is not None else state().reader()
    with_details(found, paper_details(store, [s.paper for s in found]))


def _reading_rows(found: list[Any]) -> list[dict[str, Any]]:
    rows = []
    for i, s in enumerate(found, start=1):
        authors = ", ".join(s.authors[:3]) + (" et al." if len(s.authors) > 3 else "")
        evidence = (f"[{', '.join(s.sentence_intents)}] " if s.sentence_intents else "") + s.sentence \
            if s.sentence else ""
        rows.append({"rank": i, "id": s.id, "title": s.title, "authors": authors, "year": s.year or "",
                     "venue": s.venue or "", "score": f"{s.score:.2f}", "reason": s.reason, "evidence": evidence,
                     "summary": s.summary, "citations": "" if s.citations is None else s.citations,
                     "link": s.link, "paper": s.paper})
    return rows


@reading_app.callback()
def reading(
    ctx: typer.Context,
    technique: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--technique", "-t", help="Only evidence towards this technique (default: every technique you follow, "
                                  "as kg following lists them, and the papers you read).", show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=500, help="How many papers.")] = 10,
    add: Annotated[bool, typer.Option("--add", help="Put the papers shown on the reading list as to-read.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Papers not on your reading list, ranked by citation evidence towards what you follow: methodology or
    influential citations of your techniques' papers and of the papers you read, co-citation, shared
    references, and Semantic Scholar's recommendations. Each comes with its reason and the sentence of its
    strongest citation, its authors, year, venue, TLDR or abstract, citation count and link, and a score from 0
    to 1 (the chance that at least one piece of its evidence is right). Reject one with kg suggest reading
    reject ID."""
    if ctx.invoked_subcommand is not None:
        return
    from pyoxigraph import NamedNode

    from kg.analytics.suggest import DuckDBReadingFacts
    from kg.cli.output import emit, emit_json
    from kg.readnext import add_to_reading_list, reading_suggestions

    state().json_errors = fmt is Format.json
    source = _source(technique, write=add)
    node = NamedNode(source.technique) if source.technique else None
    try:
        found = reading_suggestions(source.store, technique=node, limit=limit,
                                    facts=DuckDBReadingFacts(source.con) if source.con else None,
                                    rejected=source.rejected, followed=source.follows)
    finally:
        source.close()
    _details(found, source)
    added = add_to_reading_list(state().store(), [s.paper for s in found]) if add and found else []
    if added:
        from kg.cli.search import keep_index_current
        from kg.graphs import READING

        keep_index_current(state().store(), papers=added, graphs=[READING])
    if fmt is Format.json:
        emit_json({"technique": node.value if node else None, "added": added,
                   "followed": "chosen" if source.follows is not None else "inferred",
                   "suggestions": [s.as_dict() for s in found]})
        return
    rows = _reading_rows(found)
    if fmt is Format.csv:
        emit(rows, ["rank", "id", "title", "authors", "year", "venue", "score", "reason", "evidence", "summary",
                    "citations", "link", "paper"], fmt="csv")
        return
    from rich.markup import escape

    from kg.cli.output import console

    out = console()
    if rows:
        emit(rows, ["rank", "id", "title", "authors", "year", "venue", "score", "reason", "evidence", "summary",
                    "citations", "link"], title=f"Read next: {_count(len(rows), 'paper')}", lines=True)
        out.print("[dim]Reject one with kg suggest reading reject ID; put them on your list with --add.[/]")
    else:
        out.print("Read next: none")
    if add:
        out.print(f"[green]{len(added)} paper(s) put on the reading list as to-read[/]"
                  + (f" ({len(found) - len(added)} were on it already)" if len(found) > len(added) else ""))
    if node is None:
        out.print("[dim]" + ("Towards the techniques you follow (kg following)." if source.follows is not None else
                             "Towards the techniques you follow, as inferred from your reading (kg follow chooses)."
                             ) + "[/]")
    if not source.citations:
        out.print(f"[yellow]{escape(_NO_CITATIONS)}[/]")


def _paper_for(store: Any, ident: str) -> str:
    """The paper an id of kg suggest reading (rd-…) or a paper reference (IRI, arXiv id, DOI,
    title) names."""
    import re

    from kg.errors import NotFoundError
    from kg.reading import resolve_paper
    from kg.rejections import reading_id

    wanted = ident.strip().lower()
    if re.fullmatch(r"rd-[0-9a-f]{8}", wanted):
        rows = store.select("SELECT DISTINCT ?p WHERE { ?p a bibo:Document FILTER(isIRI(?p)) }")
        for row in rows.rows:
            if row["p"] is not None and reading_id(row["p"].value) == wanted:
                return str(row["p"].value)
        raise NotFoundError(f"no paper has the suggestion id {ident!r}",
                            hint="Copy the id from kg suggest reading, or give the paper's arXiv id, DOI or title.")
    return str(resolve_paper(store, ident).value)


@reading_app.command("reject")
def reading_reject(
    idents: Annotated[list[str], typer.Argument(metavar="ID...", help="Suggestion ids (rd-…, as kg suggest reading "
                                                                      "shows them), or papers: arXiv id, DOI, IRI or "
                                                                      "title.")],
    undo: Annotated[bool, typer.Option("--undo", help="Take the rejection back instead.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Reject suggested papers: they are never suggested again, and kg ingest citations --recommendations gives
    them to Semantic Scholar as papers to be unlike. Kept in your own reading-decisions graph."""
    from kg.cli.output import console, emit, emit_json
    from kg.rejections import reject, unreject

    state().json_errors = fmt is Format.json
    store = state().store()
    papers = [_paper_for(store, ident) for ident in idents]
    if undo:
        count = unreject(store, papers)
        data: Any = {"unrejected": count, "papers": papers}
    else:
        done = reject(store, papers)
        data = [{"id": r.id, "paper": r.paper, "at": r.at} for r in done]
    if fmt is Format.json:
        emit_json(data)
    elif fmt is Format.csv:
        emit(data if isinstance(data, list) else [data], fmt="csv")
    elif undo:
        console().print(f"{data['unrejected']} paper(s) may be suggested again.")
    else:
        for row in data:
            console().print(f"[yellow]rejected[/] {row['paper']} ({row['id']}): it will not be suggested again.",
                            highlight=False)
