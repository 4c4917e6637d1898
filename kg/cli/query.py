"""``kg query``: list and run the named SPARQL queries of ``queries/*.rq``."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state

if TYPE_CHECKING:
    from queries import NamedQuery

__all__ = ["query", "register"]


class QueryFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    tsv = "tsv"
    xml = "xml"
    turtle = "turtle"
    ntriples = "ntriples"
    jsonld = "jsonld"


def _parse_params(values: list[str]) -> dict[str, list[str]]:
    from kg.errors import ParameterError

    out: dict[str, list[str]] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(
                f"--param {item!r} is not NAME=VALUE", parameter=key.strip() or item,
                hint="Write e.g. --param technique=GDN (repeat --param for more parameters).",
            )
        out.setdefault(key.strip(), []).append(value)
    return out


def _compact(value: Any) -> str:
    """IRIs shortened with the standard prefixes, for the terminal table only."""
    from kg.vocab import PREFIXES

    text = "" if value is None else str(value)
    if "://" in text:
        for prefix, base in sorted(PREFIXES.items(), key=lambda item: -len(item[1])):
            if text.startswith(base) and len(text) > len(base):
                return f"{prefix}:{text[len(base):]}"
    return text


def _list(fmt: QueryFormat) -> None:
    import queries
    from kg.cli.output import emit, emit_json

    rows = [
        {"name": q.name, "title": q.title, "description": q.description,
         "parameters": "; ".join(f"{p.name}: {p.signature}" for p in q.params)}
        for q in queries.all_queries()
    ]
    if fmt is QueryFormat.json:
        emit_json([
            {**row, "kind": q.kind, "returns": q.returns.split(),
             "params": [{"name": p.name, "type": p.type + ("[]" if p.many else ""), "required": p.required,
                         "default": p.default, "description": p.description} for p in q.params]}
            for row, q in zip(rows, queries.all_queries(), strict=True)
        ])
        return
    emit(rows, ["name", "description", "parameters"], fmt="csv" if fmt is QueryFormat.csv else "table",
         title=f"{len(rows)} named queries (run one with: kg query NAME --param KEY=VALUE)")


def _show(named: NamedQuery) -> None:
    from kg.cli.output import console

    out = console()
    out.print(f"[bold]{named.name}[/]: {named.title}", highlight=False)
    out.print(named.description, highlight=False)
    for p in named.params:
        out.print(f"  --param {p.name}=…  {p.signature}  {p.description}", highlight=False, markup=False)
    out.print()
    out.print(named.text.rstrip(), highlight=False, markup=False)


def query(
    name: Annotated[
        Optional[str],  # noqa: UP045
        typer.Argument(help="The named query to run (see --list).", show_default=False),
    ] = None,
    list_: Annotated[
        bool, typer.Option("--list", "-l", help="List the named queries with their descriptions.")
    ] = False,
    param: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--param", "-p", help="A parameter as NAME=VALUE; repeat it for more. "
                     "List parameters take a,b,c or a repeated NAME.", show_default=False),
    ] = None,
    fmt: Annotated[
        QueryFormat,
        typer.Option("--format", "-f", help="table, or json/csv/tsv/xml (SPARQL results); "
                     "turtle/ntriples/jsonld for CONSTRUCT/DESCRIBE."),
    ] = QueryFormat.table,
    limit: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(min=1, help="Return at most this many rows."),
    ] = None,
    show: Annotated[
        bool, typer.Option("--show", help="Print the query and its parameters; do not run it.")
    ] = False,
) -> None:
    """Run a named SPARQL query from the library (kg query --list shows them all)."""
    import queries
    from kg.errors import KGError, QueryError

    state().json_errors = fmt is QueryFormat.json
    if list_ or name is None:
        if name is None and not list_:
            raise QueryError("name a query to run, or pass --list", hint="kg query --list shows them all.")
        _list(fmt)
        return
    named = queries.get(name)
    if show:
        _show(named)
        return
    from kg.cli.core import _stdout_bytes
    from kg.cli.output import console, emit
    from kg.resolve import Resolver
    from kg.results import Solutions, serialize_solutions, serialize_triples

    store = state().reader()
    text, bindings = queries.prepare(named, _parse_params(param or []), Resolver(store))
    result = store.query(text, bindings, max_rows=limit)
    if isinstance(result, list):
        rdf = {"table": "turtle", "json": "jsonld"}.get(fmt.value, fmt.value)
        if rdf not in ("turtle", "ntriples", "jsonld"):
            raise KGError(f"--format {fmt.value} is for SELECT and ASK results",
                          hint="Use turtle, ntriples or jsonld for a CONSTRUCT or DESCRIBE query.")
        _stdout_bytes(serialize_triples(result, rdf))
        return
    if fmt is QueryFormat.table:
        if isinstance(result, bool):
            console().print("yes" if result else "no")
            return
        assert isinstance(result, Solutions)
        shown = [v for v in result.variables if v not in bindings and named.param(v) is None] or result.variables
        rows = [{v: _compact(r[v]) for v in shown} for r in result.records()]
        title = f"{named.title}: {len(result)} rows" + (" (cut at --limit)" if result.truncated else "")
        emit(rows, shown, title=title)
        return
    if fmt.value not in ("json", "csv", "tsv", "xml"):
        raise KGError(f"--format {fmt.value} is for CONSTRUCT and DESCRIBE results",
                      hint="Use table, json, csv, tsv or xml for SELECT and ASK queries.")
    _stdout_bytes(serialize_solutions(result, fmt.value))


def register(app: typer.Typer) -> None:
    app.command("query")(query)
