"""Named queries answered from the DuckDB analytics tables when they are fresh.

An analytic question over the whole corpus (a bibliography of 250,000 papers, the whole
reading queue) is a scan and a sort: seconds of lookups for the store, a fraction of a
second for DuckDB. A named query with a *twin* (:mod:`~kg.analytics.twins`) is answered
from the analytics file when that file is fresh (:func:`freshness`: built by this version,
and every graph's provenance signature the same as the store's now), from its answer
table where the build kept one (:mod:`~kg.analytics.stored`), with the rows of the table's
tail merged in by their page key as they are read (:func:`_fetched`). Otherwise it is answered
by SPARQL, and the answer says why (the answer layer, :mod:`kg.answer`, decides).

Pages follow the query's page key with the ordering kg.paging gives SPARQL (NULL as
unbound: first, or last when descending or LAST), so a cursor from one path continues on the other.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pyoxigraph as ox

from kg import scratch
from kg.analytics.encoding import term as _term
from kg.analytics.stored import (
    answer_table,
    has_tail,
    order_sql,
    stored_table,
    tail_table,
    twin_params,
    used_params,
)
from kg.analytics.twins import STORED, TWINS, Kind
from kg.vocab import XSD

if TYPE_CHECKING:
    import duckdb

    from kg.paging import Answer, Page, SortKey
    from kg.results import Term
    from kg.store.base import GraphStore
    from queries import Bound, NamedQuery

__all__ = ["duckdb_answer", "freshness", "mended_by_build", "tables_answer"]


# -- freshness -------------------------------------------------------------------------


#: How the reasons that a build mends begin (:func:`freshness` gives them).
_MENDED = ("no analytics tables yet", "the analytics tables were made by another version",
           "the analytics file is incomplete", "the analytics tables are stale")


def mended_by_build(why: str) -> bool:
    """Whether the tables could not answer for a reason ``kg analytics build`` mends (not a
    parameter they cannot narrow by, nor a file another process is writing)."""
    return why.startswith(_MENDED)


def freshness(store: GraphStore, path: Path, *, stale: bool = False) -> tuple[duckdb.DuckDBPyConnection | None, str]:
    """A read-only connection to the analytics file when it is fresh, else None and why;
    with ``stale``, also a connection to tables some graphs changed since (and why they
    are stale), for a page that says so."""
    from kg.analytics.files import wait_pending

    found, why = _freshness(store, path, stale=stale)
    if why and wait_pending(path):  # a patch was on its way (kg serve's keeper): look again
        if found is not None:
            found.close()
        found, why = _freshness(store, path, stale=stale)
    return found, why


def _freshness(store: GraphStore, path: Path, *, stale: bool) -> tuple[duckdb.DuckDBPyConnection | None, str]:
    from kg.analytics.files import connect, engine, graph_states
    from kg.analytics.schema import schema_current

    if not path.exists():
        return None, "no analytics tables yet (kg analytics build makes them)"
    try:
        con = connect(path, read_only=True)
    except Exception:  # noqa: BLE001 - held by a writer, or unreadable: SPARQL answers instead
        return None, "the analytics file is being built or cannot be read"
    try:
        meta = dict(con.execute("SELECT key, value FROM staging.meta").fetchall())
        if not schema_current(meta):
            con.close()
            return None, "the analytics tables were made by another version (kg analytics build --full)"
        built = dict(con.execute("SELECT graph, signature FROM staging.graphs").fetchall())
    except engine().Error:
        con.close()
        return None, "the analytics file is incomplete (kg analytics build --full)"
    now = {g: s.signature for g, s in graph_states(store).items()}
    if built != now:
        changed = sorted(set(built.items()) ^ set(now.items()))
        from kg.graphs import graph_name

        names = ", ".join(sorted({graph_name(ox.NamedNode(g)) for g, _ in changed}))
        why = f"the analytics tables are stale ({names} changed since the last kg analytics build)"
        if stale:
            return con, why
        con.close()
        return None, why
    return con, ""


# -- answering -------------------------------------------------------------------------

_MISSING: Any = object()


_NUMBERS = {XSD.integer.value: int, XSD.decimal.value: float, XSD.double.value: float, XSD.float.value: float}


def _plain(kind: Kind, value: Any, marker: Any = None) -> Any:
    """The plain value (kg.results.python_value) of what :func:`_term` would make."""
    if value is None:
        return None
    if kind == "integer":
        return int(value)
    if kind == "boolean":
        return str(value) in ("true", "1")
    if kind == "term" and marker:
        if marker in _NUMBERS:
            try:
                return _NUMBERS[marker](value)
            except ValueError:
                return value
        if marker == XSD.boolean.value:
            return value in ("true", "1")
    return str(value)


#: The datatypes whose literals :func:`_plain` makes numbers or booleans of.
_CONVERTED = frozenset({*_NUMBERS, XSD.boolean.value})


def _plain_column(kind: Kind, values: Sequence[Any], markers: Sequence[Any] | None, text: bool) -> Sequence[Any]:
    """:func:`_plain` of each cell of a column (``text``: a VARCHAR column). Most columns
    (IRIs, strings, dates, terms of no numeric or boolean datatype) are their text as it is."""
    if kind in ("integer", "boolean") or (kind == "term" and markers is not None
                                          and not _CONVERTED.isdisjoint(markers)):
        return [_plain(kind, value, marker) for value, marker in zip(values, markers or [None] * len(values),
                                                                      strict=True)]
    return values if text else [None if v is None else str(v) for v in values]


def _sql_value(term: Term | None) -> Any:
    """A cursor value as the twin's SQL holds it."""
    if term is None:
        return None
    if isinstance(term, ox.Literal) and term.datatype.value in (XSD.integer.value, XSD.decimal.value):
        return Decimal(term.value)
    return term.value  # type: ignore[union-attr]


def _after(key: Sequence[SortKey], values: Sequence[Term | None], params: dict[str, Any]) -> str:
    """SQL for "comes after ``values``" in the page key order (NULL as unbound: first, or
    last when descending or ``LAST``)."""
    condition = "FALSE"
    for i, (part, value) in reversed(list(enumerate(zip(key, values, strict=True)))):
        column = f'"{part.variable}"'
        if value is None:
            gt, eq = ("FALSE", f"{column} IS NULL") if part.descending or part.last else (
                f"{column} IS NOT NULL", f"{column} IS NULL")
        else:
            params[f"after{i}"] = _sql_value(value)
            gt = (f"({column} IS NULL OR {column} < $after{i})" if part.descending
                  else f"({column} IS NULL OR {column} > $after{i})" if part.last else f"{column} > $after{i}")
            eq = f"{column} = $after{i}"
        condition = gt if condition == "FALSE" else f"({gt} OR ({eq} AND {condition}))"
    return condition


def duckdb_answer(
    store: GraphStore, named: NamedQuery, bound: Mapping[str, Bound], *, limit: int | None,
    after: Sequence[Term | None] | None, plain: bool = False,
) -> Answer | str | None:
    """The rows of ``named`` from fresh analytics tables; else why they cannot answer,
    or None when the query has no twin. With ``plain``, rows hold plain values
    (kg.results.python_value) instead of terms: no term is made only to be taken apart."""
    from kg.analytics.files import database_path

    twin = TWINS.get(named.name)
    if twin is None:
        return None
    unread = sorted(set(bound) - set(twin.params))
    if unread:  # the SQL would answer as if it were not given
        return f"the analytics tables do not narrow by {unread[0]!r}"
    path = database_path(store.location)
    con, why = freshness(store, path)
    if con is None:
        return why
    return tables_answer(con, path, named, bound, limit=limit, after=after, plain=plain, store=store)


def tables_answer(
    con: duckdb.DuckDBPyConnection, path: Path, named: NamedQuery, bound: Mapping[str, Bound], *,
    limit: int | None, after: Sequence[Term | None] | None, plain: bool = False, store: GraphStore | None,
) -> Answer | None:
    """The rows of ``named`` (a query with a twin that narrows by each of ``bound``) from
    ``con``, tables found fresh; None (``con`` closed) when the twin needs rows of the
    store and there is none (``store`` None: answering without it, kg.analytics.memo)."""
    twin = TWINS[named.name]
    if twin.extra is not None and store is None:
        con.close()
        return None
    params = twin_params(twin, bound)
    table = answer_table(con, named.name, params)
    order = order_sql(named)
    paged = limit is not None or after is not None
    where = f" WHERE {_after(named.page, after, params)}" if after is not None else ""
    note = f"answered from the DuckDB analytics tables (fresh) in {path}"
    stored = stored_table(con, named.name) if twin.stored is not None else None
    kept = table or (stored if twin.in_order else None)
    if kept is not None:
        # kept in the page key's order (a stored table only filtered): no sort, a page stops at its last row
        def read(source: str) -> str:
            if table is not None:
                return f"SELECT * FROM {source} AS answer"
            return f"SELECT * FROM ({twin.sql.replace(STORED, source)}) AS answer"

        sql, tail = _kept_sql(con, named.name, read, kept, where, order, limit)
        return _answer(con, sql, params, twin.kinds, named.page if paged else (), limit, note, plain,
                       (tail, named.page) if tail else None)
    # a page in its key's order; the whole answer in the query's order, if it has one
    ordered = paged or re.search(r"\bORDER\s+BY\b", named.text, re.IGNORECASE) is not None
    order_limit = (f" ORDER BY {order}" if named.page and ordered else "") + (
        f" LIMIT {limit + 1}" if limit is not None else "")
    if twin.keys is not None and limit is not None:  # choose the page's rows by their keys first, then make only those
        text = f"SELECT {twin.keys_narrow} FROM ({twin.keys}) AS answer{where}{order_limit}"
        keys = con.execute(text, {k: v for k, v in params.items() if re.search(rf"\${k}\b", text)}).fetchall()
        params["page"] = sorted({row[0] for row in keys})
    text = twin.sql
    if twin.stored is not None:
        text = text.replace(STORED, stored or f"({twin.stored})")
    sql = f"SELECT * FROM ({text}) AS answer{where}{order_limit}"
    if twin.extra is not None:
        import duckdb  # noqa: F401 - its Arrow sources: what registering an Arrow table reads through

        assert store is not None
        con.register("extra", twin.extra(store, params))
    return _answer(con, sql, params, twin.kinds, named.page if paged else (), limit, note, plain)


def _kept_sql(con: duckdb.DuckDBPyConnection, name: str, read: Callable[[str], str], table: str, where: str,
             order: str, limit: int | None) -> tuple[str, str | None]:
    """SQL of the rows that ``read`` makes of ``table`` (kept in ``order``) as it is, up to
    ``limit + 1`` of them, and where the table has a tail (kg.analytics.stored), SQL of the
    tail's rows in ``order``, to merge into them (:func:`_fetched`)."""
    cut = f" LIMIT {limit + 1}" if limit is not None else ""
    tail = f"{read(tail_table(name))}{where} ORDER BY {order}" if has_tail(con, name) else None
    return f"{read(table)}{where}{cut}", tail


def _answer(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any], kinds: Mapping[str, Kind],
            key: Sequence[SortKey], limit: int | None, note: str, plain: bool,
            tail: tuple[str, Sequence[SortKey]] | None = None) -> Answer:
    """The rows of ``sql`` (merged with those of ``tail`` by its key, :func:`_fetched`) as a page of terms
    (or plain values), or written whole in a results format without a term per cell
    (:attr:`kg.paging.Answer.write`): one or the other."""
    from kg.paging import Answer, page_rows

    fetch = _Fetch(sql, params, *(tail or (None, ())))
    page = page_rows(list(kinds), _rows(con, fetch, kinds, plain=plain), key, limit)

    def write(fmt: str, out: IO[bytes]) -> int:
        return _write(con, fetch, kinds, page, key, limit, fmt, out)

    return Answer(page, source="duckdb", note=note, write=write)


@contextmanager
def _session(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """A query's memory bound and spill folder; the connection is closed after it."""
    with scratch.folder("kg-answer-") as spill:
        try:
            con.execute(f"SET memory_limit = '1GB'; SET temp_directory = '{spill}'")
            yield
        finally:
            con.close()


def _plan(names: Sequence[str], kinds: Mapping[str, Kind]) -> list[tuple[Kind, int, int | None]]:
    """For each variable: its kind, its column and its marker's column (kind "term")."""
    return [(kind, names.index(v), names.index(v + "__d") if kind == "term" else None) for v, kind in kinds.items()]


#: Rows read from DuckDB at a time (bounded memory, few calls).
_BATCH = 5000


@dataclass(frozen=True)
class _Fetch:
    """What an answer's rows are read by: ``sql`` with those of ``params`` it names, and
    the SQL of a tail whose rows go among them by the page ``key`` (:func:`_fetched`)."""

    sql: str
    params: dict[str, Any]
    tail: str | None = None
    key: Sequence[SortKey] = ()


class _Descending:
    """A value that sorts the other way round."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Descending) -> bool:
        return bool(other.value < self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and bool(self.value == other.value)

    __hash__ = None  # type: ignore[assignment]


def _ranking(key: Sequence[SortKey], columns: Sequence[str]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A row's place in the page key's order, as DuckDB's ORDER BY of :func:`order_sql`
    gives it (NULL first, or last when descending or LAST; text by code point)."""
    parts = [(columns.index(k.variable), k.descending, k.descending or k.last) for k in key]

    def rank(row: tuple[Any, ...]) -> tuple[Any, ...]:
        out: list[Any] = []
        for i, descending, nulls_last in parts:
            value = row[i]
            if value is None:
                out.append((1,) if nulls_last else (0,))
            else:
                out.append((0 if nulls_last else 1, _Descending(value) if descending else value))
        return tuple(out)

    return rank


def _fetched(con: duckdb.DuckDBPyConnection, fetch: _Fetch) -> tuple[list[Any], Iterator[list[tuple[Any, ...]]]]:
    """The columns (DuckDB's description) and the batches of rows of ``fetch``. A tail's
    rows (few: kg.analytics.stored.TAIL_MOST at most, in order) are read first, and each
    goes after the rows that do not come after it in the key's order."""
    waiting = con.execute(fetch.tail, used_params(fetch.tail, fetch.params)).fetchall() if fetch.tail else []
    result = con.execute(fetch.sql, used_params(fetch.sql, fetch.params))
    columns = list(result.description)

    def batches() -> Iterator[list[tuple[Any, ...]]]:
        if not waiting:
            while batch := result.fetchmany(_BATCH):
                yield batch
            return
        rank = _ranking(fetch.key, [c[0] for c in columns])
        places = [rank(row) for row in waiting]
        due = 0
        while batch := result.fetchmany(_BATCH):
            merged, start, last = [], 0, rank(batch[-1])
            while due < len(waiting) and places[due] < last:  # (one equal to the last row: perhaps in the next batch)
                cut = bisect.bisect_right(batch, places[due], lo=start, key=rank)
                merged += batch[start:cut]
                merged.append(waiting[due])
                start, due = cut, due + 1
            yield merged + batch[start:]
        if due < len(waiting):
            yield waiting[due:]

    return columns, batches()


def _write(con: duckdb.DuckDBPyConnection, fetch: _Fetch, kinds: Mapping[str, Kind], page: Page,
           key: Sequence[SortKey], limit: int | None, fmt: str, out: IO[bytes]) -> int:
    """Write the rows in ``fmt`` from DuckDB's batches, column by column (see
    kg.analytics.encoding); set ``page.next`` as the page of terms would. The row count."""
    from kg.analytics.encoding import Column, write_columns
    from kg.paging import encode_cursor

    variables = list(kinds)
    keyed = [variables.index(k.variable) for k in key]

    def batches(fetched: Iterator[list[tuple[Any, ...]]], plan: list[tuple[Kind, int, int | None]]
                ) -> Iterator[list[Column]]:
        written, last = 0, None
        # Rows, not Arrow batches: importing pyarrow (and numpy) would cost more than it saves.
        for rows in fetched:
            raw = list(zip(*rows, strict=True))
            size = len(rows)
            more = limit is not None and written + size > limit
            if more:
                size = limit - written  # type: ignore[operator]
            columns: list[Column] = [(kind, raw[i][:size], raw[d][:size] if d is not None else None)
                                     for kind, i, d in plan]
            if size:
                last = [(kind, values[-1], markers[-1] if markers else None)
                        for kind, values, markers in (columns[p] for p in keyed)]
                written += size
                yield columns
            if more:
                if last is not None and keyed:
                    page.next = encode_cursor([_term(*cell) for cell in last])
                return

    with _session(con):
        described, fetched = _fetched(con, fetch)
        return write_columns(variables, batches(fetched, _plan([d[0] for d in described], kinds)), fmt, out)


def _rows(con: duckdb.DuckDBPyConnection, fetch: _Fetch, kinds: Mapping[str, Kind], *,
          plain: bool) -> Iterator[tuple[Any, ...]]:
    """The rows of ``fetch`` as terms, or with ``plain`` as plain values (made a column at a time)."""
    with _session(con):
        described, fetched = _fetched(con, fetch)
        plan = _plan([d[0] for d in described], kinds)
        text = [str(d[1]) == "VARCHAR" for d in described]
        # Techniques, statuses, roles, venues repeat from row to row: each column keeps
        # the terms it made lately.
        caches: list[dict[tuple[Any, Any], Any]] = [{} for _ in plan]
        for batch in fetched:
            if plain:
                columns = list(zip(*batch, strict=True))
                yield from zip(*(_plain_column(kind, columns[i], columns[d] if d is not None else None, text[i])
                                 for kind, i, d in plan), strict=True)
                continue
            for row in batch:
                out = []
                for (kind, i, d), cache in zip(plan, caches, strict=True):
                    value = (row[i], row[d] if d is not None else None)
                    term = cache.get(value, _MISSING)
                    if term is _MISSING:
                        if len(cache) > 20_000:
                            cache.clear()
                        term = cache[value] = _term(kind, *value)
                    out.append(term)
                yield tuple(out)
