"""The named SPARQL query library: one query per ``queries/<name>.rq`` file.

Each file opens with a comment header::

    # title: Ancestors of a technique
    # description: Every technique this one derives from, through typed lineage relations.
    # param ?technique: technique (required) -- the technique, by name, alias or IRI
    # param ?depth: integer = 10 -- follow at most this many lineage steps
    # param ?section: string (optional) -- left unbound when not given
    # returns: ?ancestor ?name ?relation
    # page: ?name ?ancestor

``page`` names the query's page key (see kg.paging): projected variables that order its
rows totally, ``DESC(?var)`` for a descending part. A query with one can be read a page
at a time (``kg query NAME --limit N --after CURSOR``, ``/queries/NAME?limit=&after=``).

Parameters are bound as RDF terms through ``VALUES`` blocks in every WHERE group
(kg.sparqltext.inject_values, applied by GraphStore.query on every backend), never
pasted into the query text, so a value cannot change the query. Use a parameter where
the WHERE group (or a sub-select's) sees it, not only inside a UNION branch's FILTER.
Types: iri, technique, paper, category, string, integer, decimal, boolean, date,
datetime, status. A type followed by ``[]`` (``technique[]``) takes a list of values,
given comma-separated or by repeating the parameter; the block then holds one row per
value. A parameter marked ``(optional)`` stays unbound when it is not given.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from importlib import resources
from typing import IO, Any

import pyoxigraph as ox

from kg.errors import ParameterError, QueryError
from kg.paging import Page, SortKey, decode_cursor, page_rows, parse_key, projection
from kg.results import QueryResult, Term
from kg.sparqltext import inject_values
from kg.store.base import GraphStore
from kg.vocab import XSD

__all__ = [
    "PARAM_TYPES",
    "Answer",
    "Bound",
    "NamedQuery",
    "Param",
    "all_queries",
    "answer",
    "bind",
    "get",
    "prepare",
    "records",
    "run",
]

PARAM_TYPES: dict[str, str] = {
    "iri": "an absolute IRI, e.g. https://arxiv.org/abs/2412.06464",
    "technique": "a technique name, alias or IRI, e.g. GDN",
    "paper": "a paper title, arXiv id or IRI",
    "category": "a category id or label, e.g. attention",
    "string": "any text",
    "integer": "a whole number, e.g. 10",
    "decimal": "a number, e.g. 0.5",
    "boolean": "true or false",
    "date": "a date YYYY-MM-DD",
    "datetime": "a date-time YYYY-MM-DDTHH:MM:SSZ",
    "status": "a reading status: to-read, reading, read, skipped or a custom one",
}

_PARAM = re.compile(
    r"^#\s*param\s+\?(?P<name>\w+)\s*:\s*(?P<type>\w+)(?P<many>\[\])?\s*"
    r"(?:\((?P<required>required|optional)\)|=\s*(?P<default>\S+))?\s*(?:(?:--|—)\s*(?P<doc>.*))?$"
)
_FIELD = re.compile(r"^#\s*(?P<key>title|description|returns|page)\s*:\s*(?P<value>.*)$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$")


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    required: bool = False
    default: str | None = None
    description: str = ""
    #: A list parameter (``technique[]``): one or more values.
    many: bool = False

    @property
    def expected(self) -> str:
        meaning = PARAM_TYPES.get(self.type, self.type)
        if self.many:
            return f"{self.type}[] (one or more, comma-separated; each {meaning})"
        return f"{self.type} ({meaning})"

    @property
    def signature(self) -> str:
        """``technique (required)``, ``integer = 6`` or ``string (optional)``, for listings."""
        kind = self.type + ("[]" if self.many else "")
        if self.required:
            return f"{kind} (required)"
        return f"{kind} = {self.default}" if self.default is not None else f"{kind} (optional)"


@dataclass(frozen=True)
class NamedQuery:
    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    text: str
    returns: str = ""
    kind: str = field(default="select")
    #: The page key: empty when the query is not read page by page.
    page: tuple[SortKey, ...] = ()

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def _parse(name: str, text: str) -> NamedQuery:
    meta: dict[str, str] = {}
    params: list[Param] = []
    for line in text.splitlines():
        if not line.startswith("#"):
            if line.strip():
                break
            continue
        m = _PARAM.match(line.strip())
        if m:
            if m.group("type") not in PARAM_TYPES:
                raise QueryError(f"queries/{name}.rq: parameter ?{m.group('name')} has unknown type "
                                 f"{m.group('type')!r}", hint="Types: " + ", ".join(PARAM_TYPES))
            params.append(Param(m.group("name"), m.group("type"), m.group("required") == "required",
                                (m.group("default") or "").strip() or None, (m.group("doc") or "").strip(),
                                many=bool(m.group("many"))))
            continue
        if re.match(r"^#\s*param\b", line.strip()):
            raise QueryError(f"queries/{name}.rq: cannot read the header line {line.strip()!r}",
                             hint="Write: # param ?name: type (required) | (optional) | = default -- text")
        f = _FIELD.match(line.strip())
        if f:
            meta[f.group("key")] = (meta.get(f.group("key"), "") + " " + f.group("value")).strip()
    body = re.sub(r"(?m)^\s*#.*$", "", text).upper()
    kind = next((k.lower() for k in ("CONSTRUCT", "DESCRIBE", "ASK", "SELECT") if re.search(rf"\b{k}\b", body)),
                "select")
    page: tuple[SortKey, ...] = ()
    if "page" in meta:
        try:
            page = parse_key(meta["page"])
            missing = [k.variable for k in page if k.variable not in projection(text)]
        except ValueError as exc:
            raise QueryError(f"queries/{name}.rq: its page key {meta['page']!r}: {exc}") from None
        if missing:
            raise QueryError(f"queries/{name}.rq: its page key ?{missing[0]} is not a variable it selects")
    return NamedQuery(name, meta.get("title", name), meta.get("description", ""), tuple(params), text,
                      meta.get("returns", ""), kind, page)


@cache
def _one(name: str, text: str) -> NamedQuery:
    return _parse(name, text)


@cache
def _library() -> tuple[NamedQuery, ...]:
    root = resources.files("queries")
    out = [_one(p.name.removesuffix(".rq"), p.read_text(encoding="utf-8"))
           for p in root.iterdir() if p.name.endswith(".rq")]
    return tuple(sorted(out, key=lambda q: q.name))


def all_queries() -> list[NamedQuery]:
    """Every named query shipped in this package, sorted by name."""
    return list(_library())


def get(name: str) -> NamedQuery:
    """The named query ``name``; an unknown name suggests close ones. Only its own file
    is read (parsing every query's page key costs a command's start-up time)."""
    if re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        found = resources.files("queries") / f"{name}.rq"
        if found.is_file():
            return _one(name, found.read_text(encoding="utf-8"))
    queries = {q.name: q for q in _library()}
    if name in queries:
        return queries[name]
    from difflib import get_close_matches

    close = get_close_matches(name, list(queries), n=3)
    raise QueryError(f"there is no named query {name!r}",
                     hint=("Did you mean " + ", ".join(close) + "? " if close else "")
                     + "List them with: kg query --list")


Resolver = Callable[[str, str], ox.NamedNode]
Bound = ox.NamedNode | ox.Literal | list[ox.NamedNode | ox.Literal]


def _convert(param: Param, raw: str, resolve: Resolver | None) -> ox.NamedNode | ox.Literal:
    value = raw.strip()
    try:
        if param.type == "iri":
            if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$", value):
                raise ValueError
            return ox.NamedNode(value)
        if param.type in ("technique", "paper", "category", "status"):
            if resolve is None:
                return ox.NamedNode(value)
            return resolve(param.type, value)
        if param.type == "integer":
            return ox.Literal(str(int(value)), datatype=XSD.integer)
        if param.type == "decimal":
            number = Decimal(value)
            if not number.is_finite():
                raise ValueError
            return ox.Literal(str(number), datatype=XSD.decimal)
        if param.type == "boolean":
            if value.lower() not in ("true", "false"):
                raise ValueError
            return ox.Literal(value.lower(), datatype=XSD.boolean)
        if param.type == "date":
            if not re.match(r"^\d{4}-\d{2}-\d{2}$", value):
                raise ValueError
            dt.date.fromisoformat(value)
            return ox.Literal(value, datatype=XSD.date)
        if param.type == "datetime":
            if not _DATETIME.match(value):
                raise ValueError
            dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return ox.Literal(value, datatype=XSD.dateTime)
        return ox.Literal(value)
    except (ValueError, InvalidOperation):
        raise ParameterError(
            f"parameter {param.name!r} got {raw!r}, which is not {param.expected}",
            parameter=param.name, expected=param.expected,
            hint=f"Pass --param {param.name}=<{param.type}>.",
        ) from None


def _items(param: Param, raw: str | Sequence[str]) -> list[str]:
    items = [raw] if isinstance(raw, str) else list(raw)
    if param.many:
        items = [part for item in items for part in item.split(",")]
    items = [item.strip() for item in items if item.strip()]
    if not items:
        raise ParameterError(
            f"parameter {param.name!r} is empty; it takes {param.expected}",
            parameter=param.name, expected=param.expected,
            hint=f"Pass --param {param.name}=<{param.type}>.",
        )
    if len(items) > 1 and not param.many:
        raise ParameterError(
            f"parameter {param.name!r} takes one value, not {len(items)}",
            parameter=param.name, expected=param.expected,
            hint=f"Pass --param {param.name}=<{param.type}> once.",
        )
    return items


def bind(
    query: NamedQuery, raw: Mapping[str, str | Sequence[str]], resolve: Resolver | None = None
) -> dict[str, Bound]:
    """Check and convert ``raw`` string parameters into RDF terms for ``query``.

    A list parameter gives a list of terms; every other parameter gives one term."""
    unknown = sorted(set(raw) - {p.name for p in query.params})
    if unknown:
        names = ", ".join(p.name for p in query.params) or "none"
        raise ParameterError(f"{query.name} has no parameter {unknown[0]!r}", parameter=unknown[0],
                             hint=f"Its parameters are: {names}.")
    out: dict[str, Bound] = {}
    for param in query.params:
        value = raw.get(param.name)
        if value is None and param.default is not None:
            value = param.default
        if value is None:
            if param.required:
                raise ParameterError(
                    f"{query.name} needs the parameter {param.name!r} ({param.expected})",
                    parameter=param.name, expected=param.expected,
                    hint=f"Pass --param {param.name}=<{param.type}>.",
                )
            continue
        terms = [_convert(param, item, resolve) for item in _items(param, value)]
        out[param.name] = terms if param.many else terms[0]
    return out


def prepare(
    query: NamedQuery, raw: Mapping[str, str | Sequence[str]], resolve: Resolver | None = None
) -> tuple[str, dict[str, ox.NamedNode | ox.Literal]]:
    """The text to run and the single-term bindings to pass along with it.

    List parameters become ``VALUES`` blocks (one row per value) in the text; the other
    parameters stay bindings, which ``store.query`` turns into blocks of its own."""
    bound = bind(query, raw, resolve)
    lists = {k: v for k, v in bound.items() if isinstance(v, list)}
    single = {k: v for k, v in bound.items() if not isinstance(v, list)}
    return inject_values(query.text, lists), single


@dataclass
class Answer:
    """A named query's rows as they come (:class:`kg.paging.Page`), and what answered it."""

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


def asked(
    named: NamedQuery, params: Mapping[str, str | Sequence[str]] | None, resolve: Resolver | None, *,
    limit: int | None, after: str | None,
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
    params: Mapping[str, str | Sequence[str]] | None = None,
    resolve: Resolver | None = None,
    *,
    limit: int | None = None,
    after: str | None = None,
    analytics: bool = True,
) -> Answer:
    """Run a SELECT named query and stream its rows: a page of at most ``limit`` rows
    after the cursor ``after`` for a query with a page key (``limit`` alone truncates
    one without). With ``analytics``, a query that has a DuckDB twin is answered from the
    analytics tables when they are fresh (see kg.analytics.answers), else by SPARQL."""
    bound, cursor, paged = asked(named, params, resolve, limit=limit, after=after)
    fallback = ""
    if analytics:
        from kg.analytics.answers import duckdb_answer

        found = duckdb_answer(store, named, bound, limit=limit, after=cursor if paged else None)
        if isinstance(found, Answer):
            return found
        fallback = found or ""
    # Bound before a page wraps the query, so that the values reach its own groups.
    text = inject_values(named.text, bound)
    stream = store.page(text, named.page, limit, cursor) if paged else store.stream_ordered(text)
    note = f"answered by SPARQL on {store.location}" + (f": {fallback}" if fallback else "")
    return Answer(page_rows(stream.variables, stream.rows, named.page if paged else (), limit), note=note,
                  fallback=fallback)


def records(store: GraphStore, name: str, params: Mapping[str, str | Sequence[str]] | None = None,
            resolve: Resolver | None = None) -> list[dict[str, Any]]:
    """A SELECT named query's rows as plain values (see kg.results.python_value), answered
    like :func:`answer`: from fresh analytics tables where the query has a twin."""
    from kg.analytics.answers import duckdb_answer
    from kg.results import python_value

    named = get(name)
    if named.kind == "select":
        found = duckdb_answer(store, named, bind(named, params or {}, resolve), limit=None, after=None, plain=True)
        if isinstance(found, Answer):
            return [dict(zip(found.page.variables, row, strict=True)) for row in found.page]
    stream = answer(store, named, params, resolve, analytics=False).page
    return [{v: python_value(t) for v, t in zip(stream.variables, row, strict=True)} for row in stream]


def run(store: GraphStore, name: str, params: Mapping[str, str | Sequence[str]] | None = None,
        resolve: Resolver | None = None, *, max_rows: int | None = None) -> QueryResult:
    """Run the named query ``name`` on ``store`` with ``params`` bound as RDF terms."""
    text, bindings = prepare(get(name), params or {}, resolve)
    return store.query(text, bindings, max_rows=max_rows)
