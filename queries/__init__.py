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

``# whole: in lots`` says that a grouped query's whole answer, where SPARQL gives it, is
read a lot of groups at a time (kg.keyfirst.whole): for a query whose groups are many and
wide (the bibliography's authors and venues), which Oxigraph would hold all at once (4.2 GB
at 700k papers, against 0.8 GB). A query whose groups are few or narrow is not worth it:
its lots cost more than its own grouping (the reading queue's: 38 s against 16 s).

Parameters are bound as RDF terms through ``VALUES`` blocks in every WHERE group
(kg.sparqltext.inject_values, applied by GraphStore.query on every backend), never
pasted into the query text, so a value cannot change the query. Use a parameter where
the WHERE group (or a sub-select's) sees it, not only inside a UNION branch's FILTER.
Types: iri, technique, paper, category, string, integer, decimal, boolean, date,
datetime, status. A type followed by ``[]`` (``technique[]``) takes a list of values,
given comma-separated or by repeating the parameter; the block then holds one row per
value. A parameter marked ``(optional)`` stays unbound when it is not given.

What belongs here: the ``.rq`` files, their loader (:func:`get`, :func:`all_queries`) and
the binder (:func:`bind`, :func:`prepare`): data and the checks of what a caller passes.
What does not: running a query or deciding who answers it (the store or the DuckDB
tables) and paging its rows: that is the answer layer, :mod:`kg.answer`. This package
imports only the core's vocabulary, errors and query text helpers, never the store,
kg.analytics, kg.server or kg.cli.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from importlib import resources

import pyoxigraph as ox

from kg.errors import ParameterError, QueryError
from kg.paging import SortKey, parse_key
from kg.sparqltext import inject_values
from kg.vocab import XSD

__all__ = [
    "PARAM_TYPES",
    "Bound",
    "NamedQuery",
    "Param",
    "Resolver",
    "all_queries",
    "bind",
    "get",
    "prepare",
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
_FIELD = re.compile(r"^#\s*(?P<key>title|description|returns|page|whole)\s*:\s*(?P<value>.*)$")
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
    #: Whether a whole answer by SPARQL is read a lot of groups at a time (``# whole: in lots``).
    in_lots: bool = False

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
    if "page" in meta:  # (that it names variables the query selects, the tests check: parsing costs a command)
        try:
            page = parse_key(meta["page"])
        except ValueError as exc:
            raise QueryError(f"queries/{name}.rq: its page key {meta['page']!r}: {exc}") from None
    if meta.get("whole", "in lots") != "in lots":
        raise QueryError(f"queries/{name}.rq: cannot read its header line '# whole: {meta['whole']}'",
                         hint="Write '# whole: in lots', or leave the line out.")
    return NamedQuery(name, meta.get("title", name), meta.get("description", ""), tuple(params), text,
                      meta.get("returns", ""), kind, page, in_lots="whole" in meta)


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
