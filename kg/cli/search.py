"""``kg search``: full-text search over the papers and techniques (the index of :mod:`kg.search`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt, pick_format

if TYPE_CHECKING:
    from kg.search.query import Results

__all__ = ["register"]


def _say(message: str) -> None:
    print(message, file=sys.stderr)


def _ready_index(spec: str | None, fmt: Format) -> Any:
    """The index of the store, made or brought up to date first when it is missing or stale
    (the store is opened only then: a fresh index answers alone)."""
    from kg.search.index import index_root, open_index, quick_fresh, ready_index

    if quick_fresh(spec):
        opened = open_index(index_root(spec))
        if opened is not None:
            return opened[0]
    from kg.cli.output import progress_bar

    store = state().reader()
    with progress_bar(show=fmt is Format.table) as bar:
        task = bar.add_task("search index", total=None)
        index, note = ready_index(
            store, on_rebuild=lambda: _say(f"making the search index of {store.location} (once; every write keeps "
                                           "it current)"),
            progress=lambda step, done, total: bar.update(task, description=step, completed=done,
                                                          total=total or None))
    if note:
        _say(note)
    state().close_reader()
    return index


def _as_json(results: Results, names: dict[str, str]) -> dict[str, Any]:
    return {"query": results.query, "filters": vars(results.filters), "total": results.total,
            "technique": {"id": results.technique[0], "name": results.technique[1]} if results.technique else None,
            "hits": [h.as_dict() for h in results.hits],
            "facets": {name: [{"value": v, "count": n, **({"name": names[v]} if name == "technique" and v in names
                                                          else {})} for v, n in values]
                       for name, values in results.facets.items()}}


def search(
    words: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045
        metavar="QUERY", help='Words to find (every word must match): "a phrase", prefix*, title:word, a OR b; '
                              "-word leaves out (quote the query, or put -- before it).", show_default=False)] = None,
    technique: Annotated[Optional[str], typer.Option(  # noqa: UP045 - typer needs Optional
        "--technique", "-t", help="Only papers linked to this technique (id, name or alias), and the technique.",
        show_default=False)] = None,
    status: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--status", "-s", help="Only papers with this reading status (to-read, reading, read, skipped, yours).",
        show_default=False)] = None,
    year: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--year", "-y", help="A year (2024) or a range: 2023-2025, 2023- (since), -2020 (until).",
        show_default=False)] = None,
    category: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--category", "-c", help="A category: the catalog's (attention, moe, ...), your reading list's, arXiv's "
                                 "(cs.LG).", show_default=False)] = None,
    mine: Annotated[bool, typer.Option("--mine", help="Only your own: papers on your reading list or with your "
                                                      "notes, techniques you follow or added.")] = False,
    kind: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--kind", help="Only papers or only techniques.", show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="How many results.")] = 20,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Skip this many results first (paging).")] = 0,
    facets: Annotated[bool, typer.Option("--facets", help="Also count the results by kind, status, year, category "
                                                          "and technique (always in JSON).")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Search the titles, abstracts, TLDRs and your notes of the papers, and the names, aliases and descriptions
    of the techniques. Results come best first (BM25), each with the passage that matched, its matched words
    marked «so». The index lives beside the store and every write keeps it current."""
    from kg.search.query import Filters, technique_names
    from kg.search.query import search as run

    fmt = pick_format(fmt)
    query = " ".join(words or [])
    index = _ready_index(state().store_spec, fmt)
    filters = Filters(technique=technique, status=status, year=year, category=category, mine=mine, kind=kind)
    results = run(index, query, filters, limit=limit, offset=offset, facets=facets or fmt is Format.json)
    names = technique_names(index, [v for v, _n in results.facets.get("technique", [])])
    if fmt is Format.json:
        from kg.cli.output import emit_json

        emit_json(_as_json(results, names))
        return
    rows = [{"rank": offset + i, "kind": h.kind, "title": h.title + (" (technique)" if h.kind == "technique" else ""),
             "year": h.year or "", "status": h.status or "", "match": h.snippet, "link": h.link, "iri": h.iri}
            for i, h in enumerate(results.hits, start=1)]
    from kg.cli.output import emit

    if fmt is Format.csv:
        emit(rows, ["rank", "kind", "title", "year", "status", "match", "link", "iri"], fmt="csv")
        return
    from kg.cli.output import console

    out = console()
    shown = f"{len(rows)} of {results.total:,}" if results.total > len(rows) else f"{results.total:,}"
    about = f" linked to {results.technique[1]}" if results.technique else ""
    if rows:
        emit(rows, ["rank", "title", "year", "status", "match"], title=f"{shown} result(s){about}", lines=True)
    else:
        out.print(f"No result{about}.", highlight=False)
    if facets:
        for name, values in results.facets.items():
            if values:
                shown_values = ", ".join(f"{names.get(v, v) if name == 'technique' else v} {n}" for v, n in values)
                out.print(f"by {name}: {shown_values}", highlight=False, markup=False)
    if results.total > offset + len(rows):
        out.print(f"More: --offset {offset + len(rows)}", highlight=False, style="dim")


def register(app: typer.Typer) -> None:
    app.command("search")(search)


def keep_index_current(store: Any, *, papers: Any = (), techniques: Any = (), graphs: Any = None) -> None:
    """After a write: the papers and techniques (IRIs) whose documents it changed, in
    ``graphs`` (None: not known). The search index's keeper (kg.search.keeper) brings the
    index up to date with them as the command ends, beside the analytics tables; a store
    no keeper watches any more is brought up to date now (see
    :func:`kg.search.update_index`). The write stands whatever happens; a failure is said
    on stderr, and the next ``kg search`` catches up."""
    from kg.derived import Changes, record

    described = None if graphs is None else {g if isinstance(g, str) else g.value for g in graphs}
    if record(store, Changes(documents={*papers, *techniques}, described=described)):
        return
    from kg.search.index import update_index

    try:
        update_index(store, papers=papers, techniques=techniques, graphs=graphs)
    except Exception as error:  # noqa: BLE001 - the write is done: whatever happens here must not undo its report
        _say(f"the search index was not brought up to date ({error}); the next kg search does it")


def index_after_build(store: Any, *, force: bool, fmt: Format, linked: Any = None) -> None:
    """``kg build`` makes the search index when there is none (or ``--force``), else keeps it
    current: with ``linked`` (:class:`kg.cli.links.Relinked`), the papers the build linked again."""
    from kg.search.index import freshness, rebuild_index

    try:
        if force or freshness(store).state == "missing":
            from kg.cli.output import progress_bar

            with progress_bar(show=fmt is Format.table) as bar:
                task = bar.add_task("search index", total=None)
                rebuild_index(store, progress=lambda step, done, total: bar.update(
                    task, description=f"search index: {step}", completed=done, total=total or None))
        else:
            keep_index_current(store, papers=linked.papers if linked else (), graphs=linked.graphs if linked else None)
    except Exception as error:  # noqa: BLE001 - the build is done: the index is derived data
        _say(f"the search index was not made ({error}); kg search makes it")
