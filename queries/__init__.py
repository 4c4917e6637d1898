"""The named SPARQL query library: one query per ``queries/<name>.rq`` file.

Each file opens with a comment header::

    # title: Ancestors of a technique
    # description: Every technique this one derives from, through typed lineage relations.
    # param ?technique: technique (required) -- the technique, by name, alias or IRI
    # param ?depth: integer = 10 -- follow at most this many lineage steps
    # returns: ?ancestor ?name ?relation

Parameters are bound as RDF terms through ``VALUES`` blocks in every WHERE group
(kg.sparqltext.inject_values, applied by GraphStore.query on every backend), never
pasted into the query text, so a value cannot change the query. Types: iri, technique, paper, category, string, integer, decimal,
boolean, date, datetime, status.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources

import pyoxigraph as ox

from kg.errors import ParameterError, QueryError
from kg.results import QueryResult
from kg.store.base import GraphStore
from kg.vocab import XSD

__all__ = ["PARAM_TYPES", "NamedQuery", "Param", "all_queries", "bind", "get", "run"]

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
    r"^#\s*param\s+\?(?P<name>\w+)\s*:\s*(?P<type>\w+)\s*"
    r"(?:\((?P<required>required)\)|=\s*(?P<default>\S+))?\s*(?:(?:--|—)\s*(?P<doc>.*))?$"
)
_FIELD = re.compile(r"^#\s*(?P<key>title|description|returns)\s*:\s*(?P<value>.*)$")


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    required: bool = False
    default: str | None = None
    description: str = ""

    @property
    def expected(self) -> str:
        return f"{self.type} ({PARAM_TYPES.get(self.type, self.type)})"


@dataclass(frozen=True)
class NamedQuery:
    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    text: str
    returns: str = ""
    kind: str = field(default="select")

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
            params.append(Param(m.group("name"), m.group("type"), bool(m.group("required")),
                                (m.group("default") or "").strip() or None, (m.group("doc") or "").strip()))
            continue
        f = _FIELD.match(line.strip())
        if f:
            meta[f.group("key")] = (meta.get(f.group("key"), "") + " " + f.group("value")).strip()
    body = re.sub(r"(?m)^\s*#.*$", "", text).upper()
    kind = next((k.lower() for k in ("CONSTRUCT", "DESCRIBE", "ASK", "SELECT") if re.search(rf"\b{k}\b", body)),
                "select")
    return NamedQuery(name, meta.get("title", name), meta.get("description", ""), tuple(params), text,
                      meta.get("returns", ""), kind)


def all_queries() -> list[NamedQuery]:
    """Every named query shipped in this package, sorted by name."""
    root = resources.files("queries")
    out = [_parse(p.name.removesuffix(".rq"), p.read_text(encoding="utf-8"))
           for p in root.iterdir() if p.name.endswith(".rq")]
    return sorted(out, key=lambda q: q.name)


def get(name: str) -> NamedQuery:
    """The named query ``name``; an unknown name suggests close ones."""
    queries = {q.name: q for q in all_queries()}
    if name in queries:
        return queries[name]
    from difflib import get_close_matches

    close = get_close_matches(name, list(queries), n=3)
    raise QueryError(f"there is no named query {name!r}",
                     hint=("Did you mean " + ", ".join(close) + "? " if close else "")
                     + "List them with: kg query --list")


Resolver = Callable[[str, str], ox.NamedNode]


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
            return ox.Literal(str(float(value)), datatype=XSD.decimal)
        if param.type == "boolean":
            if value.lower() not in ("true", "false"):
                raise ValueError
            return ox.Literal(value.lower(), datatype=XSD.boolean)
        if param.type == "date":
            if not re.match(r"^\d{4}-\d{2}-\d{2}$", value):
                raise ValueError
            return ox.Literal(value, datatype=XSD.date)
        if param.type == "datetime":
            if not re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})?$", value):
                raise ValueError
            return ox.Literal(value, datatype=XSD.dateTime)
        return ox.Literal(value)
    except ValueError:
        raise ParameterError(
            f"parameter {param.name!r} got {raw!r}, which is not {param.expected}",
            parameter=param.name, expected=param.expected,
            hint=f"Pass --param {param.name}=<{param.type}>.",
        ) from None


def bind(query: NamedQuery, raw: Mapping[str, str], resolve: Resolver | None = None) -> dict[str, ox.NamedNode | ox.Literal]:
    """Check and convert ``raw`` string parameters into RDF terms for ``query``."""
    unknown = sorted(set(raw) - {p.name for p in query.params})
    if unknown:
        names = ", ".join(p.name for p in query.params) or "none"
        raise ParameterError(f"{query.name} has no parameter {unknown[0]!r}", parameter=unknown[0],
                             hint=f"Its parameters are: {names}.")
    out: dict[str, ox.NamedNode | ox.Literal] = {}
    for param in query.params:
        if param.name in raw:
            out[param.name] = _convert(param, raw[param.name], resolve)
        elif param.default is not None:
            out[param.name] = _convert(param, param.default, resolve)
        elif param.required:
            raise ParameterError(
                f"{query.name} needs the parameter {param.name!r} ({param.expected})",
                parameter=param.name, expected=param.expected,
                hint=f"Pass --param {param.name}=<{param.type}>.",
            )
    return out


def run(store: GraphStore, name: str, params: Mapping[str, str] | None = None,
        resolve: Resolver | None = None, *, max_rows: int | None = None) -> QueryResult:
    """Run the named query ``name`` on ``store`` with ``params`` bound as RDF terms."""
    query = get(name)
    return store.query(query.text, bind(query, params or {}, resolve), max_rows=max_rows)
