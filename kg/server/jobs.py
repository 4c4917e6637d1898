"""What a query worker does for one request: the jobs, and how each is answered.

A job says what to run (a SPARQL query, a named query, a graph of the Graph Store
Protocol) and in which format to answer; :func:`execute` runs it over an open store and
returns the answer's bytes and media type (a whole named SELECT: a :class:`Streamed`
writer of them, row by row), or raises the :class:`EndpointError` to send. It runs
inside a query worker process (:mod:`kg.server.workers`), so the result is built and
serialised there, under the worker's memory limit; nothing here touches HTTP.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import IO

import kg.answer
import queries
from kg.errors import KGError
from kg.graphs import graph_iri
from kg.results import Solutions, serialize_solutions, serialize_triples
from kg.server.errors import EndpointError, from_kg_error, refused
from kg.store.base import Dataset, GraphStore
from kg.wording import counted

__all__ = ["GRAPH_FORMATS", "Choices", "GraphJob", "Job", "NamedJob", "Outcome", "SparqlJob", "Streamed", "execute"]

log = logging.getLogger("kg.server")

#: Graph formats: name → (media type, kg.results.serialize_triples format).
GRAPH_FORMATS: dict[str, tuple[str, str]] = {
    "turtle": ("text/turtle", "turtle"),
    "ntriples": ("application/n-triples", "ntriples"),
    "jsonld": ("application/ld+json", "jsonld"),
    "rdfxml": ("application/rdf+xml", "rdfxml"),
}

#: The negotiated (format, media type) for SPARQL results and for a graph, or the 406
#: to send if the query turns out to produce that kind. A query's form is only certain
#: once it has run, so both are settled up front.
Choices = tuple["tuple[str, str] | EndpointError", "tuple[str, str] | EndpointError"]


@dataclass(frozen=True)
class SparqlJob:
    """A SPARQL query from a client."""

    text: str
    choices: Choices
    max_rows: int
    dataset: Dataset | None = None
    #: The hosts SERVICE may contact (``kg serve --allow-service``); the worker decides on
    #: the parsed query (:mod:`kg.sparqloutbound`) before it runs it.
    allow_service: tuple[str, ...] = ()


@dataclass(frozen=True)
class NamedJob:
    """One of the named queries, with the parameters from the URL or form."""

    name: str
    params: dict[str, str | list[str]] = field(default_factory=dict)
    choices: Choices = (("json", "application/sparql-results+json"), ("turtle", "text/turtle"))
    max_rows: int = 10_000
    #: Read page by page: at most this many rows after the cursor ``after``.
    page: int | None = None
    after: str | None = None


@dataclass(frozen=True)
class GraphJob:
    """One named graph (or, with ``graph`` None, the default graph: the union) for
    ``GET /store``, serialised as ``fmt`` (a :data:`GRAPH_FORMATS` name)."""

    graph: str | None
    fmt: str


Job = SparqlJob | NamedJob | GraphJob


#: An answer: its bytes, its media type, and facts for the response's headers
#: (``source``: what answered a named query; ``fallback``: why not the analytics tables;
#: ``next``: the cursor of the next page).
Outcome = tuple[bytes, str, dict[str, str]]


@dataclass(frozen=True)
class Streamed:
    """An answer written as it comes: its media type and header facts (as for an
    :data:`Outcome`), known before the first row, and ``write(out)``, which writes its
    bytes to ``out`` a row at a time (the bytes of ``kg query NAME -f FORMAT``)."""

    media: str
    headers: dict[str, str]
    write: Callable[[IO[bytes]], object]


def execute(store: GraphStore, job: Job) -> Outcome | Streamed:
    """Run ``job`` over ``store``: the answer whole, or (a named SELECT query asked for
    whole, without ``limit`` or ``after``) to be streamed. Raises :class:`EndpointError`
    for any answer other than success."""
    try:
        if isinstance(job, GraphJob):
            return (*_graph(store, job), {})
        if isinstance(job, NamedJob):
            return _named(store, job)
        return (*_sparql(store, job), {})
    except KGError as error:
        raise from_kg_error(error) from None


def _named(store: GraphStore, job: NamedJob) -> Outcome | Streamed:
    """A named query: a SELECT answered like ``kg query NAME`` (from fresh DuckDB analytics
    tables where it has a twin, else by SPARQL; the headers say which, and why not DuckDB),
    page by page (at most ``max_rows`` a page) or whole, streamed in bounded memory (any
    number of rows); any other form by SPARQL, whole up to ``max_rows``."""
    from itertools import islice

    from kg.resolve import Resolver

    named = queries.get(job.name)
    if named.kind != "select":
        text, bindings = queries.prepare(named, job.params, Resolver(store))
        return (*answer(store.query(text, bindings, max_rows=job.max_rows), job.choices, job.max_rows), {})
    whole = job.page is None and job.after is None
    if whole and isinstance(job.choices[0], EndpointError):
        raise job.choices[0]  # before the query runs: its rows would have nowhere to go
    found = kg.answer.answer(store, named, job.params, Resolver(store), limit=job.page, after=job.after)
    headers = {"source": found.source}
    if found.fallback:
        headers["fallback"] = found.fallback
    if whole:
        fmt, media = job.choices[0]  # type: ignore[misc]
        return Streamed(media, headers, partial(found.write_all, fmt))
    variables = found.page.variables
    rows = [dict(zip(variables, row, strict=True)) for row in islice(found.page, job.max_rows + 1)]
    truncated = len(rows) > job.max_rows
    if truncated:
        rows.pop()
        close = getattr(found.page.rows, "close", None)  # stop the query (and free its connection) now
        if close is not None:
            close()
    if found.page.next:
        headers["next"] = found.page.next
    return (*answer(Solutions(variables, rows, truncated=truncated), job.choices, job.max_rows), headers)


def _sparql(store: GraphStore, job: SparqlJob) -> tuple[bytes, str]:
    from kg.sparqlguard import QueryRefused
    from kg.sparqloutbound import outbound, refuse_outbound
    from kg.vocab import PREFIXES

    calls = outbound(job.text, PREFIXES)
    try:
        refuse_outbound(calls, job.allow_service)
    except QueryRefused as error:
        raise refused(error) from None
    try:
        result = store.query(job.text, max_rows=job.max_rows, dataset=job.dataset)
    except KGError as error:
        if calls.services and "malformed" not in error.message:
            raise EndpointError(
                502, "the query failed, in a SERVICE call or in the query itself",
                "Check that the SERVICE endpoint answers SPARQL; the server does not report "
                "network details.", kind="ServiceFailed") from None
        raise
    return answer(result, job.choices, job.max_rows)


def answer(result: object, choices: Choices, limit: int) -> tuple[bytes, str]:
    """A query result serialised as negotiated, or a 406 / 422 (over ``limit`` rows)."""
    choice = choices[1] if isinstance(result, list) else choices[0]
    if isinstance(choice, EndpointError):
        raise choice
    name, media = choice
    if isinstance(result, Solutions) and result.truncated:
        raise EndpointError(
            422, f"the result has more than {counted(limit, 'row')}, the server's result-size limit",
            "Add LIMIT (with OFFSET to page through it) to the query, or restart the "
            "server with a larger `kg serve --max-rows`.", kind="ResultTooLarge",
        )
    if isinstance(result, Solutions | bool):
        return serialize_solutions(result, name), media
    assert isinstance(result, list)
    if len(result) > limit:
        raise EndpointError(
            422, f"the graph has {counted(len(result), 'triple')}, more than the server's result-size "
            f"limit of {limit}", "Narrow the CONSTRUCT pattern or add LIMIT, or restart the "
            "server with a larger `kg serve --max-rows`.", kind="ResultTooLarge",
        )
    return serialize_triples(result, GRAPH_FORMATS[name][1]), media


def _graph(store: GraphStore, job: GraphJob) -> tuple[bytes, str]:
    media, fmt = GRAPH_FORMATS[job.fmt]
    if job.graph is None:
        return serialize_triples(store.triples(), fmt), media
    node = graph_iri(job.graph)
    if node not in store.named_graphs():
        raise EndpointError(404, f"the store holds no graph {job.graph}",
                            "List the graphs with SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } } "
                            "at /sparql, or ask for ?default, the union of all graphs.", kind="NotFound")
    return serialize_triples(store.triples(node), fmt), media
