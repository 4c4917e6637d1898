"""Keyset paging of SELECT queries: ``--limit N --after CURSOR`` without OFFSET scans.

A pageable query declares its *page key* (``# page: ?position ?title ?paper`` in a
named query's header): projected variables whose values order the rows totally, the
last ones breaking every tie. A page is the query wrapped as a sub-select::

    SELECT <its variables> WHERE { { <the query> } FILTER(<after the cursor>) }
    ORDER BY <the key> LIMIT n + 1

so its meaning is the query's own on every backend. The cursor is the key of the last
row of a page, encoded as an opaque URL-safe string; the next page holds the rows that
come strictly after it in SPARQL's ORDER BY order (unbound first, then IRIs, then
literals; DESC reverses it). Rows inserted or removed between two pages are seen once
or not at all, never twice, and no row that was there all along is skipped.

The key's values are terms rebuilt by pyoxigraph from the cursor and serialised by it
into the filter, like every other bound value: a cursor cannot change the query.
"""

from __future__ import annotations

import base64
import binascii
import heapq
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import IO

import pyoxigraph as ox

from kg.errors import ParameterError
from kg.results import Term

__all__ = [
    "Answer",
    "Page",
    "SortKey",
    "after_filter",
    "decode_cursor",
    "encode_cursor",
    "key_function",
    "order_of",
    "page_rows",
    "paged_query",
    "parse_key",
    "projection",
    "select_page",
    "shows",
    "sort_value",
    "without_order",
]

_KEY_TOKEN = re.compile(r"(?i)^(?:(ASC|DESC|LAST)\(\s*\?(\w+)\s*\)|\?(\w+))$")
#: ``(!BOUND(?v)) ?v`` in an ORDER BY: ascending, unbound last (``LAST(?v)`` in a page key).
_UNBOUND_LAST = re.compile(r"(?i)\(\s*!\s*BOUND\s*\(\s*\?(\w+)\s*\)\s*\)\s*\?(\w+)\b")


@dataclass(frozen=True)
class SortKey:
    """One part of a page key: a projected variable, ascending or descending; ascending
    with its unbound rows last (``LAST(?v)``: ``ORDER BY (!BOUND(?v)) ?v``) where ``last``."""

    variable: str
    descending: bool = False
    last: bool = False

    def __str__(self) -> str:
        if self.last:
            return f"(!BOUND(?{self.variable})) ?{self.variable}"
        return f"DESC(?{self.variable})" if self.descending else f"?{self.variable}"


def parse_key(text: str) -> tuple[SortKey, ...]:
    """``?a DESC(?b) LAST(?c) ?d`` (or ``(!BOUND(?c)) ?c``, as in an ORDER BY) as sort
    keys; raises ValueError on anything else."""
    out = []
    for pair in _UNBOUND_LAST.finditer(text):
        if pair.group(1) != pair.group(2):
            raise ValueError(f"cannot read {pair.group(0)!r} as a sort key: (!BOUND(?v)) orders ?v itself")
    text = _UNBOUND_LAST.sub(lambda m: f"LAST(?{m.group(1)})", text)
    for token in re.findall(r"(?i)(?:ASC|DESC|LAST)\(\s*\?\w+\s*\)|\S+", text):
        m = _KEY_TOKEN.match(token)
        if not m:
            raise ValueError(f"cannot read {token!r} as a sort key; write ?var, ASC(?var), DESC(?var) or LAST(?var)")
        if m.group(2):
            order = m.group(1).upper()
            out.append(SortKey(m.group(2), order == "DESC", order == "LAST"))
        else:
            out.append(SortKey(m.group(3)))
    if not out:
        raise ValueError("a page key needs at least one variable")
    return tuple(out)


# -- cursors --------------------------------------------------------------------------


def _term_json(term: Term | None) -> object:
    if term is None:
        return None
    if isinstance(term, ox.NamedNode):
        return {"i": term.value}
    if isinstance(term, ox.BlankNode):
        return {"b": term.value}
    if isinstance(term, ox.Literal):
        if term.language:
            return {"l": term.value, "lang": term.language}
        return {"l": term.value, "dt": term.datatype.value}
    raise ValueError("a page key cannot hold a quoted triple")


def _json_term(item: object) -> Term | None:
    if item is None:
        return None
    if not isinstance(item, dict):
        raise ValueError("not a term")
    if set(item) == {"i"}:
        return ox.NamedNode(item["i"])
    if set(item) == {"b"}:
        return ox.BlankNode(item["b"])
    if set(item) == {"l", "lang"}:
        return ox.Literal(item["l"], language=item["lang"])
    if set(item) == {"l", "dt"}:
        return ox.Literal(item["l"], datatype=ox.NamedNode(item["dt"]))
    raise ValueError("not a term")


def encode_cursor(values: Sequence[Term | None]) -> str:
    """The opaque cursor for a row whose page key holds ``values``."""
    data = json.dumps([_term_json(v) for v in values], separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, key: Sequence[SortKey]) -> list[Term | None]:
    """The key values in ``cursor``; ParameterError when it is not one for ``key``."""
    problem = ParameterError(
        f"--after {cursor[:40]!r} is not a cursor of this query",
        parameter="after", expected="the cursor printed with the previous page",
        hint="Pass the value printed after the previous page (next: --after ...), unchanged.",
    )
    try:
        raw = base64.urlsafe_b64decode(cursor.strip() + "=" * (-len(cursor.strip()) % 4))
        items = json.loads(raw.decode())
        if not isinstance(items, list) or len(items) != len(key):
            raise problem
        return [_json_term(item) for item in items]
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, KeyError):
        raise problem from None


# -- the paged query ------------------------------------------------------------------


def _code(query: str) -> str:
    from kg.sparqltext import code_only

    return code_only(query)


def _depth_zero(code: str) -> list[bool]:
    """For each offset of ``code``: whether it lies outside every ``{}`` and ``()``."""
    depth, out = 0, []
    for ch in code:
        if ch in "{(":
            depth += 1
        out.append(depth == 0)
        if ch in "})":
            depth -= 1
    return out


def _select_at(code: str) -> int:
    m = re.search(r"(?i)\bSELECT\b", code)
    if m is None:
        raise ValueError("not a SELECT query")
    return m.start()


def projection(query: str) -> list[str]:
    """The variables a SELECT query projects, in order (``SELECT *`` is not supported)."""
    from kg.sparqltext import query_parts

    parts = query_parts(query)
    if parts.form != "SELECT":
        raise ValueError("not a SELECT query")
    if parts.projection is None:
        raise ValueError("SELECT * cannot be paged: name the variables")
    return parts.projection


def shows(query: str, key: Sequence[SortKey]) -> bool:
    """Whether a SELECT query shows every variable of ``key`` (``SELECT *``: taken to, as
    only running it can tell)."""
    try:
        shown = projection(query)
    except ValueError:
        return True
    return all(k.variable in shown for k in key)


def _without_order(query: str, start: int) -> str:
    """``query[start:]`` with its outermost ORDER BY clause removed (the page orders)."""
    code = _code(query)
    outside = _depth_zero(code)
    for m in re.finditer(r"(?i)\bORDER\s+BY\b", code):
        if m.start() >= start and outside[m.start()]:
            tail = re.search(r"(?i)\b(LIMIT|OFFSET)\b", code[m.end():])
            stop = m.end() + tail.start() if tail else len(query)
            return query[start : m.start()] + query[stop:]
    return query[start:]


def _gt_eq(key: SortKey, value: Term | None) -> tuple[str, str]:
    """SPARQL conditions for "comes after ``value``" and "ties with ``value``" on ``key``."""
    v = f"?{key.variable}"
    if value is None:
        return ("false", f"!BOUND({v})") if key.descending or key.last else (f"BOUND({v})", f"!BOUND({v})")
    if key.last:  # as ascending, and every unbound row comes after a bound one
        gt, eq = _gt_eq(SortKey(key.variable), value)
        return f"(!BOUND({v}) || {gt})", eq
    term = str(value)
    if isinstance(value, ox.Literal):
        eq = f"(isLiteral({v}) && {v} = {term})"
        if key.descending:
            return f"(!BOUND({v}) || !isLiteral({v}) || {v} < {term})", eq
        return f"(isLiteral({v}) && {v} > {term})", eq
    if not isinstance(value, ox.NamedNode | ox.BlankNode):
        raise ValueError("a page key cannot hold a quoted triple")
    text = str(ox.Literal(value.value))
    kind = "isIRI" if isinstance(value, ox.NamedNode) else "isBlank"
    eq = f"sameTerm({v}, {term})"
    if key.descending:
        lower = f"!BOUND({v}) || isBlank({v})" if kind == "isIRI" else f"!BOUND({v})"
        return f"({lower} || ({kind}({v}) && STR({v}) < {text}))", eq
    higher = f"isLiteral({v})" if kind == "isIRI" else f"isIRI({v}) || isLiteral({v})"
    return f"({higher} || ({kind}({v}) && STR({v}) > {text}))", eq


def after_filter(key: Sequence[SortKey], values: Sequence[Term | None], *, ties: bool = False) -> str:
    """The condition that keeps the rows strictly after ``values`` in ``key`` order, and
    with ``ties`` the rows whose key equals them too."""
    condition = "true" if ties else "false"
    for part, value in reversed(list(zip(key, values, strict=True))):
        gt, eq = _gt_eq(part, value)
        condition = gt if condition == "false" else f"({gt} || ({eq} && {condition}))"
    return condition


def order_of(query: str) -> tuple[SortKey, ...] | None:
    """The outermost ORDER BY of ``query`` as sort keys, when it orders by variables alone
    and nothing (LIMIT, OFFSET) follows it; else None."""
    code = _code(query)
    outside = _depth_zero(code)
    for m in re.finditer(r"(?i)\bORDER\s+BY\b", code):
        if outside[m.start()]:
            clause = code[m.end():].strip()
            if re.search(r"(?i)\b(LIMIT|OFFSET)\b", clause):
                return None
            try:
                return parse_key(clause)
            except ValueError:
                return None
    return None


def without_order(query: str) -> str:
    """``query`` without its outermost ORDER BY clause."""
    return query[: _select_at(_code(query))] + _without_order(query, _select_at(_code(query)))


_NUMERIC = {f"http://www.w3.org/2001/XMLSchema#{t}" for t in (
    "integer", "decimal", "double", "float", "int", "long", "short", "byte", "nonNegativeInteger",
    "positiveInteger", "negativeInteger", "nonPositiveInteger", "unsignedInt", "unsignedLong")}
_TEMPORAL = {f"http://www.w3.org/2001/XMLSchema#{t}" for t in (
    "dateTime", "dateTimeStamp", "date", "gYear", "gYearMonth", "time")}


def sort_value(term: Term | None) -> tuple[object, ...]:
    """A Python value that orders terms as SPARQL's ORDER BY does for a column of one
    kind of term: unbound first, then blank nodes, IRIs (by their text) and literals
    (numbers by value, dates and times by their ISO text, strings by code point)."""
    if term is None:
        return (0,)
    if isinstance(term, ox.BlankNode):
        return (1, term.value)
    if isinstance(term, ox.NamedNode):
        return (2, term.value)
    if isinstance(term, ox.Literal):
        datatype = term.datatype.value
        if datatype in _NUMERIC:
            try:
                number = Decimal(term.value)
                return (3, 0, number if number.is_finite() else float(term.value.replace("INF", "inf")))
            except (ArithmeticError, ValueError):
                return (3, 0, float("nan"))
        if datatype in _TEMPORAL:
            return (3, 1, term.value)
        return (3, 2, term.value, term.language or "", datatype)
    return (4, str(term))


#: The sort value of an unbound term in a ``LAST`` part: after every bound one (sort_value
#: gives them 1 to 4 first).
_LAST = (9,)


class _Descending:
    """Reverses the order of a sort value (for DESC parts of a key)."""

    __slots__ = ("value",)

    def __init__(self, value: tuple[object, ...]) -> None:
        self.value = value

    def __lt__(self, other: _Descending) -> bool:
        return other.value < self.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


def key_function(
    key: Sequence[SortKey], variables: Sequence[str]
) -> Callable[[Sequence[Term | None]], tuple[object, ...]]:
    """The Python sort key of a row (terms in ``variables`` order) for the page ``key``."""
    parts = [(variables.index(k.variable), k.descending, k.last) for k in key]

    def row_key(row: Sequence[Term | None]) -> tuple[object, ...]:
        return tuple(_Descending(sort_value(row[i])) if desc else _LAST if last and row[i] is None
                     else sort_value(row[i]) for i, desc, last in parts)

    return row_key


def select_page(variables: list[str], rows: Iterable[tuple[Term | None, ...]], key: Sequence[SortKey],
                limit: int | None, after: Sequence[Term | None] | None) -> Iterator[tuple[Term | None, ...]]:
    """The rows of one page (``limit + 1`` at most, in key order, after ``after``) picked
    from ``rows`` in any order, in memory bounded by ``limit``: the path for a store whose
    own ORDER BY is slow (Oxigraph compares IRIs and long strings by reading them back
    from disk at every comparison)."""
    row_key = key_function(key, variables)
    if after is not None:
        bound = row_key(_as_row(variables, key, after))
        rows = (row for row in rows if row_key(row) > bound)
    if limit is None:
        return iter(sorted(rows, key=row_key))
    return iter(heapq.nsmallest(limit + 1, rows, key=row_key))


def _as_row(variables: Sequence[str], key: Sequence[SortKey], values: Sequence[Term | None]) -> list[Term | None]:
    row: list[Term | None] = [None] * len(variables)
    for part, value in zip(key, values, strict=True):
        row[variables.index(part.variable)] = value
    return row


def paged_query(query: str, key: Sequence[SortKey], limit: int | None, after: Sequence[Term | None] | None,
                *, ties: bool = False) -> str:
    """``query`` as one page: at most ``limit + 1`` rows (one more tells whether another
    page follows; all of them when ``limit`` is None), in ``key`` order, after the row
    whose key is ``after`` (if given; with ``ties``, from the first row whose key equals it)."""
    code = _code(query)
    start = _select_at(code)
    variables = projection(query)
    missing = [k.variable for k in key if k.variable not in variables]
    if missing:
        raise ValueError(f"the page key ?{missing[0]} is not projected by the query")
    inner = _without_order(query, start).strip()
    where = f"FILTER({after_filter(key, after, ties=ties)})\n" if after is not None else ""
    order = " ".join(str(k) for k in key)
    return (f"{query[:start]}SELECT {' '.join('?' + v for v in variables)} WHERE {{\n{{\n{inner}\n}}\n{where}}}\n"
            f"ORDER BY {order}\n" + (f"LIMIT {limit + 1}\n" if limit is not None else ""))


@dataclass
class Page:
    """Rows as they come, at most ``limit``; once they are read, ``next`` holds the cursor
    of the page after (None when there is none)."""

    variables: list[str]
    rows: Iterator[tuple[Term | None, ...]]
    next: str | None = field(default=None)

    def __iter__(self) -> Iterator[tuple[Term | None, ...]]:
        return self.rows


def page_rows(variables: list[str], rows: Iterator[tuple[Term | None, ...]], key: Sequence[SortKey],
              limit: int | None) -> Page:
    """A :class:`Page` of ``rows`` (already in key order, ``limit + 1`` at most)."""
    positions = [variables.index(k.variable) for k in key]
    page = Page(variables, iter(()))

    def take() -> Iterator[tuple[Term | None, ...]]:
        last: tuple[Term | None, ...] | None = None
        for count, row in enumerate(rows):
            if limit is not None and count >= limit:
                if last is not None and positions:
                    page.next = encode_cursor([last[i] for i in positions])
                return
            last = row
            yield row

    page.rows = take()
    return page


@dataclass
class Answer:
    """A named query's rows as they come (:class:`Page`), and what answered it: made by the
    answer layer (:mod:`kg.answer`) from the store, or by kg.analytics from its tables."""

    page: Page
    #: "sparql" (the store) or "duckdb" (the analytics tables, when they are fresh).
    source: str = "sparql"
    #: One line that says where the rows come from, for the user.
    note: str = ""
    #: Why fresh analytics tables did not answer a query that has a DuckDB twin ("" if none).
    fallback: str = ""
    #: Where the rows can be written whole in a results format (kg.results.RESULT_FORMATS)
    #: straight from where they are, without a term per cell: ``write(fmt, out)`` gives the
    #: bytes kg.results.write_solutions writes for ``page``, sets ``page.next`` as reading
    #: the page does, and returns the row count. Use it or read ``page``, not both.
    write: Callable[[str, IO[bytes]], int] | None = None

    def write_all(self, fmt: str, out: IO[bytes]) -> int:
        """Write the rows to ``out`` in ``fmt`` as they come (``kg query -f FMT`` and a whole
        ``/queries/NAME``: the same bytes; a JSON or XML document ends with a newline);
        the row count."""
        from kg.results import write_solutions

        if self.write is not None:
            count = self.write(fmt, out)
        else:
            count = write_solutions(self.page.variables, self.page, fmt, out)
        if fmt in ("json", "xml"):
            out.write(b"\n")
        return count
