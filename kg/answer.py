"""The answer layer: how a named query (``queries/*.rq``) is answered, in one place.

Every consumer that runs a named query calls this module: the CLI (``kg query``, kg
kernels), the server (``/queries/NAME``) and the workbench, the exporters and
:mod:`kg.views`. It decides who answers, pages and streams the rows, and says which way
it went (:attr:`kg.paging.Answer.source`, ``note`` and ``fallback``):

- a SELECT with a DuckDB *twin* (:mod:`kg.analytics.twins`) is answered from the
  analytics tables while they are fresh (:mod:`kg.analytics.answers`), else by SPARQL on
  the store, with the reason;
- ``kg query`` on an embedded store asks the memo beside the tables first
  (:mod:`kg.analytics.memo`), which can answer without opening the store at all;
- everything else is SPARQL on the store, its parameters bound as RDF terms (never
  pasted into the text), a page at a time where the query has a page key (kg.paging).

A named query's rows go one way: caller → here → (kg.analytics | the store) → rows →
caller; nothing below calls back up. The query library itself (:mod:`queries`) only
loads the ``.rq`` files and binds their parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kg.errors import ParameterError, QueryError
from kg.paging import Answer, decode_cursor, page_rows
from kg.sparqltext import inject_values
from queries import Bound, NamedQuery, Resolver, bind, get, prepare

if TYPE_CHECKING:
    from kg.results import QueryResult, Term
    from kg.store.base import GraphStore

__all__ = ["Answer", "answer", "answer_at", "asked", "records", "run"]

Params = Mapping[str, str | Sequence[str]]
#: Asked, with the store and why the analytics tables cannot answer, whether it brought
#: them up to date (see :func:`answer`).
Refresh = Callable[["GraphStore", str], bool]


def asked(
    named: NamedQuery, params: Params | None, resolve: Resolver | None, *, limit: int | None, after: str | None,
) -> tuple[dict[str, Bound], list[Term | None] | None, bool]:
    """What :func:`answer` is asked: the bound parameters, the cursor's values (None
    without ``after``) and whether one page is asked for; raises for what cannot be asked."""
    if named.kind != "select":
        raise QueryError(f"{named.name} is a {named.kind.upper()} query, not a SELECT",
                         hint="Run it with kg query NAME (turtle, ntriples or jsonld).")
    if after is not None and not named.page:
        raise ParameterError(f"{named.name} is not read page by page: it takes no --after", parameter="after",
                             hint="Use --limit alone to cut its rows short.")
    if limit is not None and limit < 1:
        raise ParameterError("--limit must be at least 1", parameter="limit", expected="a positive integer")
    cursor = decode_cursor(after, named.page) if after is not None else None
    paged = bool(named.page) and (limit is not None or cursor is not None)
    return bind(named, params or {}, resolve), cursor, paged


def answer(
    store: GraphStore,
    named: NamedQuery,
    params: Params | None = None,
    resolve: Resolver | None = None,
    *,
    limit: int | None = None,
    after: str | None = None,
    analytics: bool = True,
    refresh: Refresh | None = None,
) -> Answer:
    """Run a SELECT named query and stream its rows: a page of at most ``limit`` rows
    after the cursor ``after`` for a query with a page key (``limit`` alone truncates
    one without). With ``analytics``, a query that has a DuckDB twin is answered from the
    analytics tables when they are fresh (see kg.analytics.answers), else by SPARQL;
    where a build would make them fresh, ``refresh`` is asked first whether it did (the
    CLI's brings them up to date at arXiv scale, where SPARQL would take long)."""
    bound, cursor, paged = asked(named, params, resolve, limit=limit, after=after)
    fallback = ""
    if analytics:
        found = _from_tables(store, named, bound, refresh, limit=limit, after=cursor if paged else None)
        if isinstance(found, Answer):
            return found
        fallback = found or ""
    # Bound before a page wraps the query, so that the values reach its own groups.
    text = inject_values(named.text, bound)
    if paged:
        stream = store.page(text, named.page, limit, cursor)
    else:
        stream = store.stream_ordered(text, in_lots=named.in_lots)
    note = f"answered by SPARQL on {store.location}" + (f": {fallback}" if fallback else "")
    return Answer(page_rows(stream.variables, stream.rows, named.page if paged else (), limit), note=note,
                  fallback=fallback)


def answer_at(
    spec: str | None,
    reader: Callable[[], GraphStore],
    named: NamedQuery,
    params: Params,
    *,
    limit: int | None,
    after: str | None,
    analytics: bool = True,
    refresh: Refresh | None = None,
) -> Answer:
    """:func:`answer` for the store ``spec`` (as ``--store`` names it), opened by ``reader``
    only when needed: with ``analytics``, fresh tables answer without opening the store
    where the memo says they still are (kg.analytics.memo), and an answer from the tables
    through the store leaves the memo for the next time."""
    if not analytics:
        from kg.resolve import Resolver as StoreResolver

        store = reader()
        return answer(store, named, params, StoreResolver(store), limit=limit, after=after, analytics=False)
    from kg.analytics import memo

    kept = memo.recall(spec, named)
    if kept is not None:
        from kg.errors import KGError

        try:
            bound, cursor, paged = asked(named, params, kept.resolve, limit=limit, after=after)
        except (memo.Unresolved, KGError):
            bound = None  # the store's path says what is wrong, with its hint
        if bound is not None:
            found = memo.answer(kept, named, bound, limit=limit, after=cursor if paged else None)
            if found is not None:
                return found
    view = memo.view_before(spec)
    from kg.resolve import Resolver as StoreResolver  # (not on the memo's path: it needs no store)

    store = reader()
    recorder = memo.Recorder(StoreResolver(store))
    found = answer(store, named, params, recorder, limit=limit, after=after, refresh=refresh)
    if found.source == "duckdb":
        memo.remember(spec, view, recorder.resolved)
    return found


def _from_tables(store: GraphStore, named: NamedQuery, bound: Mapping[str, Bound], refresh: Refresh | None,
                 **options: Any) -> Answer | str | None:
    """The answer from the analytics tables (kg.analytics.answers.duckdb_answer), or why
    they cannot give it; asked again once ``refresh`` brought them up to date."""
    from kg.analytics.answers import duckdb_answer, mended_by_build

    found = duckdb_answer(store, named, bound, **options)
    if isinstance(found, str) and refresh is not None and mended_by_build(found) and refresh(store, found):
        found = duckdb_answer(store, named, bound, **options)
    return found


def records(store: GraphStore, name: str, params: Params | None = None,
            resolve: Resolver | None = None, *, refresh: Refresh | None = None) -> list[dict[str, Any]]:
    """A SELECT named query's rows as plain values (see kg.results.python_value), answered
    like :func:`answer`: from fresh analytics tables where the query has a twin."""
    from kg.results import python_value

    named = get(name)
    if named.kind == "select":
        found = _from_tables(store, named, bind(named, params or {}, resolve), refresh, limit=None, after=None,
                             plain=True)
        if isinstance(found, Answer):
            return [dict(zip(found.page.variables, row, strict=True)) for row in found.page]
    stream = answer(store, named, params, resolve, analytics=False).page
    return [{v: python_value(t) for v, t in zip(stream.variables, row, strict=True)} for row in stream]


def run(store: GraphStore, name: str, params: Params | None = None, resolve: Resolver | None = None, *,
        max_rows: int | None = None) -> QueryResult:
    """Run the named query ``name`` on ``store`` with ``params`` bound as RDF terms: SPARQL,
    whatever its form, whole (up to ``max_rows``)."""
    text, bindings = prepare(get(name), params or {}, resolve)
    return store.query(text, bindings, max_rows=max_rows)
