"""``kg query``: list and run the named SPARQL queries of ``queries/*.rq``."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state

if TYPE_CHECKING:
    from kg.answer import Answer
    from queries import NamedQuery

__all__ = ["query", "register"]


class QueryFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    tsv = "tsv"
    xml = "xml"
    jsonl = "jsonl"
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


def _list(fmt: QueryFormat, *, verbose: bool = False) -> None:
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
    if fmt is QueryFormat.csv:
        emit(rows, ["name", "title", "description", "parameters"], fmt="csv")
        return
    if verbose:
        _list_verbose(queries.all_queries())
    else:
        _list_short(queries.all_queries())


def _list_short(named: list[NamedQuery]) -> None:
    """One line per query: its name and title, cut to the terminal's width."""
    from rich.text import Text

    from kg.cli.output import console, shorten

    out = console()
    width = max(len(q.name) for q in named) + 2
    out.print(Text(f"{len(named)} named queries; run one with kg query NAME -p KEY=VALUE, details with -v",
                   style="bold"))
    for q in named:
        line = Text(q.name.ljust(width), style="cyan")
        line.append(shorten(q.title, max(out.width - width, 10)))
        out.print(line, no_wrap=True, crop=False)


def _list_verbose(named: list[NamedQuery]) -> None:
    """Each query's title, description, parameters and result columns."""
    from rich.padding import Padding
    from rich.text import Text

    from kg.cli.output import console

    out = console()
    for index, q in enumerate(named):
        if index:
            out.print()
        out.print(Text.assemble((q.name, "bold cyan"), "  ", (q.title, "bold")))
        lines = [q.description] if q.description else []
        lines += [f"-p {p.name}=…  {p.signature}" + (f": {p.description}" if p.description else "") for p in q.params]
        lines += [f"returns {q.returns} ({q.kind})" if q.returns else f"a {q.kind} query"]
        for line in lines:
            out.print(Padding(Text(line), (0, 0, 0, 2)))


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
        bool, typer.Option("--list", "-l", help="List the named queries, one line each.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="With --list: each query's description, parameters and results.")
    ] = False,
    param: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--param", "-p", help="A parameter as NAME=VALUE; repeat it for more. "
                     "List parameters take a,b,c or a repeated NAME.", show_default=False),
    ] = None,
    fmt: Annotated[
        QueryFormat,
        typer.Option("--format", "-f", help="table, or json/csv/tsv/xml (SPARQL results) or jsonl (JSON Lines), "
                     "streamed row by row; turtle/ntriples/jsonld for CONSTRUCT/DESCRIBE."),
    ] = QueryFormat.table,
    limit: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(min=1, help="Return at most this many rows: one page, for a query with a page key "
                     "(the cursor of the next one is printed on stderr).", show_default=False),
    ] = None,
    after: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Start after this cursor: the one printed with the previous page.", show_default=False),
    ] = None,
    sparql_only: Annotated[
        bool, typer.Option("--sparql", help="Always ask the store, even where fresh analytics tables could answer.")
    ] = False,
    show: Annotated[
        bool, typer.Option("--show", help="Print the query and its parameters; do not run it.")
    ] = False,
) -> None:
    """Run a named SPARQL query from the library (kg query --list shows them all)."""
    import queries
    from kg.errors import KGError, QueryError

    state().json_errors = fmt in (QueryFormat.json, QueryFormat.jsonl)
    if list_ or name is None:
        if name is None and not list_:
            raise QueryError("name a query to run, or pass --list", hint="kg query --list shows them all.")
        _list(fmt, verbose=verbose)
        return
    named = queries.get(name)
    if show:
        _show(named)
        return
    raw = _parse_params(param or [])
    if named.kind == "select" and fmt.value in _SELECT_FORMATS:
        found = _answer(named, raw, limit=limit, after=after, analytics=not sparql_only)
        if fmt is QueryFormat.table:
            _table(named, found, limit)
        else:
            _stream(found, fmt.value)
        _next_page(named, found, raw, limit, fmt)
        return
    from kg.cli.core import _stdout_bytes
    from kg.resolve import Resolver

    store = state().reader()
    if named.kind != "select":
        from kg.results import serialize_solutions, serialize_triples

        text, bindings = queries.prepare(named, raw, Resolver(store))
        result = store.query(text, bindings, max_rows=limit)
        if isinstance(result, bool):
            if fmt is QueryFormat.table:
                from kg.cli.output import console

                console().print("yes" if result else "no")
            else:
                _stdout_bytes(serialize_solutions(result, "json" if fmt is QueryFormat.jsonl else fmt.value))
            return
        rdf = {"table": "turtle", "json": "jsonld"}.get(fmt.value, fmt.value)
        if rdf not in ("turtle", "ntriples", "jsonld"):
            raise KGError(f"--format {fmt.value} is for SELECT and ASK results",
                          hint="Use turtle, ntriples or jsonld for a CONSTRUCT or DESCRIBE query.")
        _stdout_bytes(serialize_triples(result, rdf))  # type: ignore[arg-type]
        return
    raise KGError(f"--format {fmt.value} is for CONSTRUCT and DESCRIBE results",
                  hint="Use table, json, jsonl, csv, tsv or xml for SELECT and ASK queries.")


_SELECT_FORMATS = ("table", "json", "csv", "tsv", "xml", "jsonl")


def _answer(named: NamedQuery, raw: dict[str, list[str]], *, limit: int | None, after: str | None,
            analytics: bool) -> Answer:
    """A SELECT's answer, as the answer layer decides (kg.answer.answer_at): the store is
    opened only when fresh analytics tables cannot answer without it."""
    from kg.answer import answer_at
    from kg.cli.analytics import refresh_tables

    return answer_at(state().store_spec, state().reader, named, raw, limit=limit, after=after, analytics=analytics,
                     refresh=refresh_tables)


def _table(named: NamedQuery, found: Answer, limit: int | None) -> None:
    from kg.cli.output import emit_stream, reader_gone
    from kg.results import python_value
    from kg.wording import counted

    page = found.page
    shown = [v for v in page.variables if named.param(v) is None] or page.variables
    index = [page.variables.index(v) for v in shown]
    rows = ({v: _compact(python_value(row[i])) for v, i in zip(shown, index, strict=True)} for row in page)
    source = " from the DuckDB analytics tables" if found.source == "duckdb" else ""

    def more(count: int) -> str:
        return " (more: see --after below)" if page.next else " (cut at --limit)" if limit and count >= limit else ""

    try:
        emit_stream(rows, shown, title=lambda n: f"{named.title}: {counted(n, 'row')}{source}{more(n)}",
                    streamed_title=f"{named.title}{source}",
                    footer=lambda n: f"{counted(n, 'row', grouped=True)}{more(n)}")
    except BrokenPipeError:
        reader_gone()


def _stream(found: Answer, fmt: str) -> None:
    import sys

    from kg.cli.output import reader_gone

    sys.stdout.flush()
    out = sys.stdout.buffer
    try:
        found.write_all(fmt, out)
        out.flush()
    except BrokenPipeError:
        reader_gone()


def _next_page(named: NamedQuery, found: Answer, raw: dict[str, list[str]], limit: int | None,
               fmt: QueryFormat) -> None:
    """Say on stderr where the rows came from (when not the store) and how to get the next page."""
    if found.source == "sparql" and not found.fallback and found.page.next is None:
        return
    import shlex
    import sys
    import textwrap

    # Plain text (no rich console to import: this is on the path of every page), the note
    # folded at the terminal's width, the command on one line to copy whole.
    from kg.cli.output import terminal_width

    lines: list[str] = []
    if found.source != "sparql" or found.fallback:
        lines += textwrap.wrap(found.note, width=terminal_width(), break_long_words=False, break_on_hyphens=False)
    if found.page.next is not None:
        args = ["kg", "query", named.name,
                *(f"-p {shlex.quote(k + '=' + v)}" for k, vs in raw.items() for v in vs)]
        if fmt is not QueryFormat.table:
            args.append(f"-f {fmt.value}")
        args += [f"--limit {limit}", f"--after {found.page.next}"]
        lines.append("next page: " + " ".join(args))
    sys.stderr.write("".join(line + "\n" for line in lines))
    sys.stderr.flush()


def register(app: typer.Typer) -> None:
    app.command("query")(query)
