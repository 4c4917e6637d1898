"""The SPARQL 1.1 Protocol endpoint and the named-query URLs, as Starlette routes.

- ``GET/POST /sparql``: queries by GET, by POST form (``query=``) and by POST
  ``application/sparql-query``; updates by POST form (``update=``) or
  ``application/sparql-update``, refused with 403 unless the server allows updates
  and the request carries its token. ``GET /sparql`` without a query returns a
  SPARQL service description.
- ``GET /queries``: the named query library as JSON; ``GET/POST /queries/{name}`` runs
  one with its parameters taken from the URL or the form; ``/queries/{name}.rq`` is
  its text.

Results are negotiated from ``Accept`` (or forced with ``format=``): SPARQL results
as JSON, XML, CSV or TSV; graphs as Turtle, N-Triples, JSON-LD or RDF/XML.

pyoxigraph cannot cancel a running query, so every store call runs in a small pool of
worker threads. The request waits until the deadline and then answers 503 while the
worker finishes on its own; a worker stuck that way still holds its slot, so runaway
queries can never take more than the pool, and a full pool answers 503 at once.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl

import pyoxigraph as ox
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

import queries
from kg.errors import (
    KGError,
    NotFoundError,
    ParameterError,
    QueryError,
    RemoteStoreError,
    StoreError,
    StoreLockedError,
)
from kg.results import RESULT_FORMATS, Solutions, serialize_solutions, serialize_triples
from kg.store.base import GraphStore
from kg.vocab import RDF

__all__ = [
    "EndpointError",
    "QueryRunner",
    "ServerSettings",
    "negotiate",
    "sparql_routes",
]

log = logging.getLogger("kg.server")
T = TypeVar("T")

#: Graph formats: name → (media type, kg.results.serialize_triples format).
GRAPH_FORMATS: dict[str, tuple[str, str]] = {
    "turtle": ("text/turtle", "turtle"),
    "ntriples": ("application/n-triples", "ntriples"),
    "jsonld": ("application/ld+json", "jsonld"),
    "rdfxml": ("application/rdf+xml", "rdfxml"),
}
_RESULT_ALIASES = {
    "application/json": "json",
    "application/xml": "xml",
    "text/xml": "xml",
}
_GRAPH_ALIASES = {"text/plain": "ntriples", "application/x-turtle": "turtle", "application/json": "jsonld"}
_FORMAT_NAMES = {"ttl": "turtle", "nt": "ntriples", "json-ld": "jsonld", "rdf": "rdfxml"}
_DATASET_PARAMS = ("default-graph-uri", "named-graph-uri", "using-graph-uri", "using-named-graph-uri")
SD = "http://www.w3.org/ns/sparql-service-description#"
FORMATS_NS = "http://www.w3.org/ns/formats/"


@dataclass(frozen=True)
class ServerSettings:
    """How ``kg serve`` runs: where it binds, what it allows, and its limits."""

    host: str = "127.0.0.1"
    port: int = 7879
    #: Accept SPARQL updates (only with ``token``).
    allow_update: bool = False
    #: The bearer token an update must carry; never logged or written anywhere.
    token: str | None = field(default=None, repr=False)
    #: Seconds a query may run before the client gets 503.
    timeout: float = 30.0
    #: Rows (or triples) a result may hold before the client gets 422.
    max_rows: int = 10_000
    #: Worker threads for store calls: the most queries that run at once.
    workers: int = 4
    #: Largest request body accepted, in bytes.
    max_body: int = 64 << 20
    cors_origins: tuple[str, ...] = ("*",)

    def __post_init__(self) -> None:
        if self.allow_update and not self.token:
            raise ValueError("updates need a token: set token= together with allow_update=True")
        if self.timeout <= 0 or self.max_rows <= 0 or self.workers <= 0:
            raise ValueError("timeout, max_rows and workers must be positive")


class EndpointError(Exception):
    """An HTTP answer other than success, with a message and a hint for the client."""

    def __init__(self, status: int, message: str, hint: str = "", *,
                 headers: dict[str, str] | None = None, kind: str = "EndpointError") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint
        self.headers = headers or {}
        self.kind = kind


def _from_kg_error(error: KGError, *, writing: bool = False) -> EndpointError:
    if isinstance(error, NotFoundError):
        status = 404
    elif isinstance(error, QueryError):  # ParameterError included
        status = 400
    elif isinstance(error, RemoteStoreError):
        status = 502
    elif isinstance(error, StoreLockedError):
        status = 503
    elif isinstance(error, StoreError):
        status = 400 if writing else 500
    else:
        status = 400
    return EndpointError(status, error.message, error.hint, kind=type(error).__name__)


class QueryRunner:
    """Runs blocking store calls in worker threads, each bounded by a deadline."""

    def __init__(self, *, timeout: float, workers: int) -> None:
        self.timeout = timeout
        self.workers = workers
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kg-query")
        self._slots = threading.BoundedSemaphore(workers)

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if not self._slots.acquire(blocking=False):
            raise EndpointError(
                503,
                f"all {self.workers} query workers are busy",
                "Retry in a moment. Queries that ran past the timeout keep their worker until "
                "they finish, since a running query cannot be cancelled.",
                headers={"Retry-After": str(max(1, int(self.timeout)))}, kind="ServerBusy",
            )

        def job() -> T:
            try:
                return fn(*args, **kwargs)
            finally:
                self._slots.release()

        future = self._pool.submit(job)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout)
        except TimeoutError:
            raise EndpointError(
                503,
                f"the query ran past the server's timeout of {self.timeout:g} s",
                "Make the query more selective (LIMIT, fewer property paths), or restart the "
                "server with a longer `kg serve --timeout SECONDS`.",
                headers={"Retry-After": str(max(1, int(self.timeout)))}, kind="QueryTimeout",
            ) from None

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


# -- content negotiation -------------------------------------------------------------


def _accepted(header: str) -> list[tuple[str, float]]:
    """Media ranges from an Accept header, best first (stable for equal weights)."""
    out = []
    for position, part in enumerate(header.split(",")):
        pieces = [p.strip() for p in part.split(";")]
        if not pieces[0]:
            continue
        weight = 1.0
        for param in pieces[1:]:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        specificity = 0 if pieces[0] == "*/*" else 1 if pieces[0].endswith("/*") else 2
        out.append((pieces[0].lower(), weight, specificity, position))
    out.sort(key=lambda item: (-item[1], -item[2], item[3]))
    return [(media, weight) for media, weight, _, _ in out if weight > 0]


def negotiate(accept: str, graph: bool, forced: str | None = None) -> tuple[str, str]:
    """(format name, media type) for a SELECT/ASK result or, with ``graph``, an RDF graph."""
    if graph:
        table = {name: media for name, (media, _) in GRAPH_FORMATS.items()}
        aliases, default = _GRAPH_ALIASES, "turtle"
    else:
        table, aliases, default = dict(RESULT_FORMATS), _RESULT_ALIASES, "json"
    if forced:
        name = _FORMAT_NAMES.get(forced.lower(), forced.lower())
        if graph and name == "json":
            name = "jsonld"
        if name not in table:
            raise EndpointError(
                406, f"format={forced!r} is not available for this result",
                "Use one of: " + ", ".join(table) + ".", kind="NotAcceptable",
            )
        return name, table[name]
    by_media = {media: name for name, media in table.items()}
    for media, _weight in _accepted(accept or "*/*"):
        if media in by_media:
            return by_media[media], media
        if media in aliases:
            return aliases[media], table[aliases[media]]
        if media == "*/*" or (media.endswith("/*") and table[default].startswith(media[:-1])):
            return default, table[default]
        if media.endswith("/*"):
            for name, full in table.items():
                if full.startswith(media[:-1]):
                    return name, full
    raise EndpointError(
        406, f"cannot answer with any of the accepted types ({accept})",
        "Accept one of: " + ", ".join(table.values()) + ".", kind="NotAcceptable",
    )


Choices = tuple["tuple[str, str] | EndpointError", "tuple[str, str] | EndpointError"]


def _choices(request: Request, forced: str | None) -> Choices:
    """The negotiated (format, media type) for SPARQL results and for a graph. A query's
    form is only certain once it has run, so both are settled up front; a 406 for the
    kind the query does not produce is never sent."""
    accept = request.headers.get("accept", "")
    found: list[tuple[str, str] | EndpointError] = []
    for graph in (False, True):
        try:
            found.append(negotiate(accept, graph, forced))
        except EndpointError as error:
            found.append(error)
    if all(isinstance(f, EndpointError) for f in found):
        raise found[0]  # type: ignore[misc]
    return found[0], found[1]


def _with_charset(media: str) -> str:
    return media + "; charset=utf-8" if media.startswith("text/") else media


def error_response(request: Request, error: EndpointError) -> Response:
    accept = request.headers.get("accept", "")
    wants_json = any(m in ("application/json", "application/sparql-results+json") for m, _ in _accepted(accept))
    if wants_json:
        body = json.dumps({"ok": False, "error": error.message, "hint": error.hint,
                           "type": error.kind, "status": error.status}, ensure_ascii=False)
        return Response(body, status_code=error.status, media_type="application/json", headers=error.headers)
    text = error.message + (f"\nhint: {error.hint}" if error.hint else "") + "\n"
    return PlainTextResponse(text, status_code=error.status, headers=error.headers)


# -- request parsing -----------------------------------------------------------------


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise EndpointError(413, f"the request body is larger than the server's limit of {limit} bytes",
                            "Send a smaller request.", kind="TooLarge")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise EndpointError(413, f"the request body is larger than the server's limit of {limit} bytes",
                                "Send a smaller request.", kind="TooLarge")
        chunks.append(chunk)
    return b"".join(chunks)


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise EndpointError(400, "the request body is not UTF-8 text", "Send the query as UTF-8.",
                            kind="BadRequest") from None


async def _parameters(request: Request, limit: int) -> tuple[list[tuple[str, str]], bytes | None, str]:
    """(URL and form parameters, raw body of a non-form POST, media type of the body)."""
    params = list(request.query_params.multi_items())
    if request.method != "POST":
        return params, None, ""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = await _body(request, limit)
    if media == "application/x-www-form-urlencoded":
        try:
            params += parse_qsl(_text(body), keep_blank_values=True, strict_parsing=False)
        except ValueError as exc:
            raise EndpointError(400, f"the form is malformed: {exc}", kind="BadRequest") from None
        return params, None, media
    return params, body, media


def _first(params: list[tuple[str, str]], key: str) -> str | None:
    values = [v for k, v in params if k == key]
    if len(values) > 1:
        raise EndpointError(400, f"the request has {len(values)} '{key}' parameters; send one",
                            kind="BadRequest")
    return values[0] if values else None


# -- handlers ------------------------------------------------------------------------


@dataclass
class Endpoint:
    store: GraphStore
    settings: ServerSettings
    runner: QueryRunner

    async def sparql(self, request: Request) -> Response:
        try:
            return await self._sparql(request)
        except EndpointError as error:
            return error_response(request, error)

    async def _sparql(self, request: Request) -> Response:
        params, body, media = await _parameters(request, self.settings.max_body)
        query, update = _first(params, "query"), _first(params, "update")
        if body is not None:
            if media == "application/sparql-query":
                query = _text(body)
            elif media == "application/sparql-update":
                update = _text(body)
            else:
                raise EndpointError(
                    415, f"cannot read a request body of type {media or '(none)'}",
                    "POST application/x-www-form-urlencoded (query= or update=), "
                    "application/sparql-query or application/sparql-update.",
                    kind="UnsupportedMediaType",
                )
        if any(k in _DATASET_PARAMS for k, _ in params):
            raise EndpointError(
                400, "this endpoint does not take default-graph-uri or named-graph-uri",
                "Its default graph is always the union of all named graphs; select a graph "
                "with GRAPH <iri> { ... } in the query instead.", kind="BadRequest",
            )
        if query is not None and update is not None:
            raise EndpointError(400, "send either a query or an update, not both", kind="BadRequest")
        if update is not None:
            if request.method != "POST":
                raise EndpointError(405, "updates must be sent with POST", kind="MethodNotAllowed",
                                    headers={"Allow": "POST"})
            return await self._update(request, update)
        if query is None:
            return self._service_description(request)
        return await self._query(request, query, _first(params, "format"))

    async def _query(self, request: Request, query: str, forced: str | None) -> Response:
        return await self._answer(lambda: self.store.query(query, max_rows=self.settings.max_rows),
                                  _choices(request, forced))

    async def _answer(self, run: Callable[[], object], choices: Choices) -> Response:
        limit = self.settings.max_rows

        def work() -> tuple[bytes, str]:
            result = run()
            choice = choices[1] if isinstance(result, list) else choices[0]
            if isinstance(choice, EndpointError):
                raise choice
            name, media = choice
            if isinstance(result, Solutions) and result.truncated:
                raise EndpointError(
                    422, f"the result has more than {limit} rows, the server's result-size limit",
                    "Add LIMIT (with OFFSET to page through it) to the query, or restart the "
                    "server with a larger `kg serve --max-rows`.", kind="ResultTooLarge",
                )
            if isinstance(result, Solutions | bool):
                return serialize_solutions(result, name), media
            assert isinstance(result, list)
            if len(result) > limit:
                raise EndpointError(
                    422, f"the graph has {len(result)} triples, more than the server's result-size "
                    f"limit of {limit}", "Narrow the CONSTRUCT pattern or add LIMIT, or restart the "
                    "server with a larger `kg serve --max-rows`.", kind="ResultTooLarge",
                )
            return serialize_triples(result, GRAPH_FORMATS[name][1]), media

        try:
            data, media = await self.runner.call(work)
        except KGError as error:
            raise _from_kg_error(error) from None
        except EndpointError:
            raise
        except Exception:
            log.exception("query failed")
            raise EndpointError(500, "the server failed while answering the query",
                                "See the server's log.", kind="InternalError") from None
        return Response(data, media_type=_with_charset(media))

    async def _update(self, request: Request, update: str) -> Response:
        if not self.settings.allow_update:
            raise EndpointError(
                403, "this endpoint is read-only: SPARQL updates are refused",
                "Start the server with `kg serve --allow-update --token TOKEN` and send the "
                "header Authorization: Bearer TOKEN.", kind="Forbidden",
            )
        auth = request.headers.get("authorization", "")
        scheme, _, given = auth.partition(" ")
        token = self.settings.token or ""
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            raise EndpointError(
                403, "the update does not carry the server's token",
                "Send the header Authorization: Bearer TOKEN with the token `kg serve --token` "
                "was given (for kg itself: set KG_STORE_TOKEN).", kind="Forbidden",
            )
        try:
            await self.runner.call(self.store.update, update)
        except KGError as error:
            raise _from_kg_error(error, writing=True) from None
        except EndpointError:
            raise
        except Exception:
            log.exception("update failed")
            raise EndpointError(500, "the server failed while applying the update",
                                "See the server's log; the update is atomic, so nothing was "
                                "half-written.", kind="InternalError") from None
        return Response(status_code=204)

    def _service_description(self, request: Request) -> Response:
        accept = request.headers.get("accept", "")
        ranked = [m for m, _ in _accepted(accept)]
        if ranked and ranked[0] == "text/html":
            return RedirectResponse(str(request.url_for("index")), status_code=303)
        name, media = negotiate(accept, graph=True)
        service = ox.BlankNode()
        dataset, default = ox.BlankNode(), ox.BlankNode()

        def sd(term: str) -> ox.NamedNode:
            return ox.NamedNode(SD + term)

        url = ox.NamedNode(str(request.url_for("sparql")))
        triples = [
            ox.Triple(service, RDF.type, sd("Service")),
            ox.Triple(service, sd("endpoint"), url),
            ox.Triple(service, sd("supportedLanguage"), sd("SPARQL11Query")),
            ox.Triple(service, sd("feature"), sd("UnionDefaultGraph")),
            ox.Triple(service, sd("defaultDataset"), dataset),
            ox.Triple(dataset, RDF.type, sd("Dataset")),
            ox.Triple(dataset, sd("defaultGraph"), default),
            ox.Triple(default, RDF.type, sd("Graph")),
        ]
        if self.settings.allow_update:
            triples.append(ox.Triple(service, sd("supportedLanguage"), sd("SPARQL11Update")))
        for fmt in ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV",
                    "SPARQL_Results_TSV", "Turtle", "N-Triples", "JSON-LD", "RDF_XML"):
            triples.append(ox.Triple(service, sd("resultFormat"), ox.NamedNode(FORMATS_NS + fmt)))
        return Response(serialize_triples(triples, GRAPH_FORMATS[name][1],
                                          prefixes={"sd": SD, "formats": FORMATS_NS}),
                        media_type=_with_charset(media))

    # -- named queries -------------------------------------------------------------

    async def query_list(self, request: Request) -> Response:
        data = [
            {
                "name": q.name, "title": q.title, "description": q.description, "kind": q.kind,
                "returns": q.returns.split(), "url": str(request.url_for("named_query", name=q.name)),
                "params": [
                    {"name": p.name, "type": p.type + ("[]" if p.many else ""), "required": p.required,
                     "default": p.default, "description": p.description, "expected": p.expected}
                    for p in q.params
                ],
            }
            for q in queries.all_queries()
        ]
        return Response(json.dumps(data, ensure_ascii=False, indent=2), media_type="application/json")

    def _named(self, name: str) -> queries.NamedQuery:
        try:
            return queries.get(name)
        except QueryError as error:
            raise EndpointError(404, error.message, error.hint, kind="NotFound") from None

    async def query_text(self, request: Request) -> Response:
        try:
            named = self._named(request.path_params["name"])
        except EndpointError as error:
            return error_response(request, error)
        return Response(named.text, media_type="application/sparql-query; charset=utf-8")

    async def named_query(self, request: Request) -> Response:
        try:
            named = self._named(request.path_params["name"])
            params, body, media = await _parameters(request, self.settings.max_body)
            if body:
                raise EndpointError(415, f"cannot read a request body of type {media or '(none)'}",
                                    "Pass the parameters in the URL or as a form.",
                                    kind="UnsupportedMediaType")
            raw: dict[str, list[str]] = {}
            for key, value in params:
                raw.setdefault(key, []).append(value)
            choices = _choices(request, raw.pop("format", [None])[-1])
            limit, after = _page_params(raw)
            flat = {k: v if len(v) > 1 else v[0] for k, v in raw.items()}
            size = min(limit or self.settings.max_rows, self.settings.max_rows)
            pages: list[queries.Answer] = []

            def run() -> object:
                from kg.resolve import Resolver

                if limit is None and after is None:
                    text, bindings = queries.prepare(named, flat, Resolver(self.store))
                    return self.store.query(text, bindings, max_rows=self.settings.max_rows)
                return _page(self.store, named, flat, size, after, pages)

            response = await self._answer(run, choices)
            if pages:
                response.headers["X-TechKG-Answered-By"] = pages[0].source
                if pages[0].page.next:
                    next_url = request.url.include_query_params(after=pages[0].page.next, limit=size)
                    response.headers["Link"] = f'<{next_url}>; rel="next"'
            return response
        except ParameterError as error:
            return error_response(request, _from_kg_error(error))
        except EndpointError as error:
            return error_response(request, error)


def _page_params(raw: dict[str, list[str]]) -> tuple[int | None, str | None]:
    """``limit`` and ``after`` taken out of a named query's URL parameters."""
    limits, afters = raw.pop("limit", []), raw.pop("after", [])
    if len(limits) > 1 or len(afters) > 1:
        raise EndpointError(400, "send one 'limit' and one 'after' parameter at most", kind="BadRequest")
    limit = None
    if limits:
        if not limits[0].isdigit() or int(limits[0]) < 1:
            raise EndpointError(400, f"limit={limits[0]!r} is not a positive whole number", kind="BadRequest")
        limit = int(limits[0])
    return limit, (afters[0] if afters else None)


def _page(store: GraphStore, named: queries.NamedQuery, params: dict[str, Any], limit: int, after: str | None,
          pages: list[queries.Answer]) -> Solutions:
    """One page of a named query (``limit`` rows at most) as Solutions; the answer, with
    the cursor of the next page, goes to ``pages``."""
    from kg.resolve import Resolver

    found = queries.answer(store, named, params, Resolver(store), limit=limit, after=after)
    rows = [dict(zip(found.page.variables, row, strict=True)) for row in found.page]
    pages.append(found)
    return Solutions(found.page.variables, rows)


def sparql_routes(store: GraphStore, settings: ServerSettings, runner: QueryRunner) -> list[Route]:
    """The endpoint's routes: /sparql, /queries, /queries/{name} and /queries/{name}.rq."""
    endpoint = Endpoint(store, settings, runner)
    return [
        Route("/sparql", endpoint.sparql, methods=["GET", "POST"], name="sparql"),
        Route("/queries", endpoint.query_list, methods=["GET"], name="queries"),
        Route("/queries/{name}.rq", endpoint.query_text, methods=["GET"], name="query_text"),
        Route("/queries/{name}", endpoint.named_query, methods=["GET", "POST"], name="named_query"),
    ]
