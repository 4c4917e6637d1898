"""The SPARQL 1.1 Protocol endpoint, the named-query URLs and a read-only Graph Store
Protocol, as Starlette routes.

- ``GET/POST /sparql``: queries by GET, by POST form (``query=``) and by POST
  ``application/sparql-query``, with the protocol's ``default-graph-uri`` and
  ``named-graph-uri`` (which win over the query's own ``FROM`` / ``FROM NAMED``; the
  union of the named graphs is the default graph only when neither names a dataset);
  updates by POST form (``update=``) or ``application/sparql-update``, refused with 403
  unless the server allows updates and the request carries its token. ``GET /sparql``
  without a query returns a SPARQL service description.
- ``GET /queries``: the named query library as JSON; ``GET/POST /queries/{name}`` runs
  one with its parameters taken from the URL or the form; ``/queries/{name}.rq`` is
  its text.
- ``GET /store?graph=IRI`` and ``GET /store?default``: one named graph, or the default
  graph (the union), in the negotiated RDF format (the read-only part of the SPARQL 1.1
  Graph Store Protocol).

Results are negotiated from ``Accept`` (or forced with ``format=``): SPARQL results
as JSON, XML, CSV or TSV; graphs as Turtle, N-Triples, JSON-LD or RDF/XML.

Every query and update text is checked before anything parses it
(:mod:`kg.sparqlguard`: its size and nesting depth), and ``SERVICE`` and ``LOAD`` reach
only the hosts of ``--allow-service``, decided on the parsed text where it runs
(:mod:`kg.sparqloutbound`). Queries run in query worker processes
(:mod:`kg.server.workers`), stopped at the deadline or the memory limit; updates run
in the server's own process, which holds the store, on a deep stack.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

import pyoxigraph as ox
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

import queries
from kg.errors import KGError, QueryError
from kg.results import RESULT_FORMATS, serialize_triples
from kg.server.errors import EndpointError, from_kg_error, refused
from kg.server.jobs import GRAPH_FORMATS, Choices, GraphJob, Job, NamedJob, SparqlJob
from kg.server.workers import PoolLimits, StoreViews, Stream, WorkerPool
from kg.sparqlguard import DEEP_STACK, QueryLimits, QueryRefused, Scan, check_query
from kg.sparqloutbound import outbound, refuse_outbound
from kg.store.base import Dataset, GraphStore
from kg.vocab import PREFIXES, RDF

__all__ = [
    "EndpointError",
    "QueryRunner",
    "ServerSettings",
    "negotiate",
    "sparql_routes",
    "worker_pool",
]

log = logging.getLogger("kg.server")
T = TypeVar("T")

_RESULT_ALIASES = {
    "application/json": "json",
    "application/xml": "xml",
    "text/xml": "xml",
}
_GRAPH_ALIASES = {"text/plain": "ntriples", "application/x-turtle": "turtle", "application/json": "jsonld"}
_FORMAT_NAMES = {"ttl": "turtle", "nt": "ntriples", "json-ld": "jsonld", "rdf": "rdfxml"}
_UPDATE_DATASET_PARAMS = ("using-graph-uri", "using-named-graph-uri")
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
    #: Seconds a query may run before it is stopped and the client gets 503.
    timeout: float = 30.0
    #: Rows (or triples) a result may hold before the client gets 422.
    max_rows: int = 10_000
    #: Query worker processes: the most queries that run at once.
    workers: int = 4
    #: Requests that may wait for a worker; one more gets 503.
    queue: int = 64
    #: Bytes of memory a query may use before it is stopped.
    query_memory: int = 1 << 30
    #: How large and deeply nested a query or update may be.
    query_limits: QueryLimits = field(default_factory=QueryLimits)
    #: Largest request body accepted, in bytes.
    max_body: int = 64 << 20
    #: Origins allowed to read the machine endpoints (/sparql, /queries, /store) from a
    #: browser (CORS); none by default, since the server holds the private reading list.
    cors_origins: tuple[str, ...] = ()
    #: Hosts (``name`` or ``name:port``) that SERVICE and LOAD may send requests to.
    allow_service: tuple[str, ...] = ()
    #: Host names besides loopback ones (and IP literals) that requests may be
    #: addressed to: a reverse proxy's, or a name of this machine.
    allowed_hosts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.allow_update and not self.token:
            raise ValueError("updates need a token: set token= together with allow_update=True")
        if self.timeout <= 0 or self.max_rows <= 0 or self.workers <= 0 or self.queue < 0 or self.query_memory <= 0:
            raise ValueError("timeout, max_rows, workers and query_memory must be positive, queue not negative")

    @property
    def pool_limits(self) -> PoolLimits:
        return PoolLimits(timeout=self.timeout, workers=self.workers, queue=self.queue, memory=self.query_memory)


def worker_pool(store: GraphStore, settings: ServerSettings) -> WorkerPool:
    """The query workers of a server over ``store``."""
    return WorkerPool(StoreViews(store), settings.pool_limits)


class QueryRunner:
    """Runs blocking store calls of the server's own process (updates, the workbench's
    pages) in daemon threads with a deep stack, each bounded by a deadline.

    These calls cannot be stopped: past the deadline the client gets 503 while the call
    finishes on its own, holding its slot. They are TechKG's own queries and the token
    holder's updates; the queries clients send run in killable workers
    (:class:`kg.server.workers.WorkerPool`)."""

    def __init__(self, *, timeout: float, workers: int) -> None:
        self.timeout = timeout
        self.workers = workers
        self._slots = threading.BoundedSemaphore(workers)

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if not self._slots.acquire(blocking=False):
            raise EndpointError(
                503, f"all {self.workers} of the server's store threads are busy",
                "Retry in a moment.", headers={"Retry-After": str(max(1, int(self.timeout)))}, kind="ServerBusy",
            )
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def settle(ok: bool, value: Any) -> None:
            if not future.done():
                future.set_result(value) if ok else future.set_exception(value)

        def job() -> None:
            ok, value = False, None  # type: tuple[bool, Any]
            try:
                ok, value = True, fn(*args, **kwargs)
            except BaseException as exc:  # handed to the caller
                ok, value = False, exc
            finally:
                self._slots.release()
            if not loop.is_closed():
                loop.call_soon_threadsafe(settle, ok, value)

        with _STACK_LOCK:
            previous = threading.stack_size(DEEP_STACK)
            try:
                threading.Thread(target=job, name="kg-store-call", daemon=True).start()
            finally:
                threading.stack_size(previous)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.timeout)
        except TimeoutError:
            raise EndpointError(
                503, f"the request ran past the server's timeout of {self.timeout:g} s",
                "Retry in a moment, or restart the server with a longer `kg serve --timeout SECONDS`.",
                headers={"Retry-After": str(max(1, int(self.timeout)))}, kind="QueryTimeout",
            ) from None

    def shutdown(self) -> None:
        """Nothing to wait for: the threads are daemons."""


_STACK_LOCK = threading.Lock()


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


def _iri(value: str, what: str) -> ox.NamedNode:
    parts = urlsplit(value)
    try:
        if not parts.scheme:
            raise ValueError(value)
        return ox.NamedNode(value)
    except ValueError:
        raise EndpointError(400, f"{what} {value!r} is not an absolute IRI",
                            "Give the graph's full IRI, e.g. https://w3id.org/techkg/graph/catalog.",
                            kind="BadRequest") from None


def _dataset(params: list[tuple[str, str]]) -> Dataset | None:
    """The protocol's dataset (``default-graph-uri``, ``named-graph-uri``), if any."""
    default = tuple(_iri(v, "default-graph-uri") for k, v in params if k == "default-graph-uri")
    named = tuple(_iri(v, "named-graph-uri") for k, v in params if k == "named-graph-uri")
    return Dataset(default, named) if default or named else None


@dataclass
class Endpoint:
    store: GraphStore
    settings: ServerSettings
    runner: QueryRunner
    pool: WorkerPool

    def _check(self, text: str, what: str) -> Scan:
        """Size and depth, before anything parses the text. SERVICE and LOAD are decided on
        the parsed text where it is run: a query's in its worker (:mod:`kg.server.jobs`), an
        update's in :meth:`_apply_update`."""
        try:
            return check_query(text, self.settings.query_limits, PREFIXES, what=what)
        except QueryRefused as error:
            raise refused(error) from None

    def _apply_update(self, update: str) -> None:
        """(In a store thread, on a deep stack.) Refuse an update's SERVICE and LOAD that the
        server does not allow, decided on its parse tree, then apply it."""
        try:
            refuse_outbound(outbound(update, PREFIXES, update=True), self.settings.allow_service, what="update")
        except QueryRefused as error:
            raise refused(error) from None
        self.store.update_unrecorded(update)
        from kg.derived import Changes, record

        # (graphs not known: kg serve's keeper finds them from their signatures, kg.derived.Background)
        record(self.store, Changes(described=None, graphs_known=False))

    async def _run(self, request: Request, job: Job) -> Response:
        answer = await self.pool.run(job, request.is_disconnected)
        assert not isinstance(answer, Stream)  # only a whole named SELECT streams
        data, media, _facts = answer
        return Response(data, media_type=_with_charset(media))

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
        if query is not None and update is not None:
            raise EndpointError(400, "send either a query or an update, not both", kind="BadRequest")
        if update is not None:
            if request.method != "POST":
                raise EndpointError(405, "updates must be sent with POST", kind="MethodNotAllowed",
                                    headers={"Allow": "POST"})
            if any(k.endswith("graph-uri") for k, _ in params):
                raise EndpointError(400, "this endpoint does not take using-graph-uri or using-named-graph-uri",
                                    "Name the graphs in the update itself (WITH, USING, GRAPH).",
                                    kind="BadRequest")
            return await self._update(request, update)
        if any(k in _UPDATE_DATASET_PARAMS for k, _ in params):
            raise EndpointError(400, "using-graph-uri and using-named-graph-uri are for updates",
                                "Give a query's dataset with default-graph-uri and named-graph-uri.",
                                kind="BadRequest")
        if query is None:
            return self._service_description(request)
        dataset = _dataset(params)
        choices = _choices(request, _first(params, "format"))
        self._check(query, "query")
        return await self._run(request, SparqlJob(query, choices, self.settings.max_rows, dataset,
                                                  allow_service=self.settings.allow_service))

    async def _update(self, request: Request, update: str) -> Response:
        if not self.settings.allow_update:
            raise EndpointError(
                403, "this endpoint is read-only: SPARQL updates are refused",
                "Start the server with `kg serve --allow-update` and a token (KG_SERVE_TOKEN or --token-file), "
                "and send the header Authorization: Bearer TOKEN.", kind="Forbidden",
            )
        auth = request.headers.get("authorization", "")
        scheme, _, given = auth.partition(" ")
        token = self.settings.token or ""
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            raise EndpointError(
                403, "the update does not carry the server's token",
                "Send the header Authorization: Bearer TOKEN with the server's token (for kg itself: set "
                "KG_STORE_TOKEN).", kind="Forbidden",
            )
        self._check(update, "update")
        try:
            await self.runner.call(self._apply_update, update)
        except KGError as error:
            raise from_kg_error(error, writing=True) from None
        except EndpointError:
            raise
        except Exception:
            log.exception("update failed")
            raise EndpointError(500, "the server failed while applying the update",
                                "See the server's log; the update is atomic, so nothing was "
                                "half-written.", kind="InternalError") from None
        finally:
            self.pool.invalidate()
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
        if self.settings.allow_service:
            triples.append(ox.Triple(service, sd("feature"), sd("BasicFederatedQuery")))
        if self.settings.allow_update:
            triples.append(ox.Triple(service, sd("supportedLanguage"), sd("SPARQL11Update")))
        for fmt in ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV",
                    "SPARQL_Results_TSV", "Turtle", "N-Triples", "JSON-LD", "RDF_XML"):
            triples.append(ox.Triple(service, sd("resultFormat"), ox.NamedNode(FORMATS_NS + fmt)))
        return Response(serialize_triples(triples, GRAPH_FORMATS[name][1],
                                          prefixes={"sd": SD, "formats": FORMATS_NS}),
                        media_type=_with_charset(media))

    # -- the Graph Store Protocol, read-only ---------------------------------------

    async def graph_store(self, request: Request) -> Response:
        try:
            params = list(request.query_params.multi_items())
            graph = _first(params, "graph")
            default = any(k == "default" for k, _ in params)
            if (graph is None) == (not default):
                raise EndpointError(400, "name one graph: ?graph=IRI, or ?default for the default graph",
                                    "The default graph is the union of all named graphs.", kind="BadRequest")
            if graph is not None:
                graph = _iri(graph, "graph").value
            fmt, _media = negotiate(request.headers.get("accept", ""), graph=True, forced=_first(params, "format"))
            return await self._run(request, GraphJob(graph, fmt))
        except EndpointError as error:
            return error_response(request, error)

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
            paged = limit is not None or after is not None
            job = NamedJob(named.name, flat, choices, self.settings.max_rows,
                           page=size if paged else None, after=after)
            answer = await self.pool.run(job, request.is_disconnected)
            if isinstance(answer, Stream):  # whole: written as the rows come
                media, headers = answer.media, answer.headers
                response: Response = StreamingResponse(answer.chunks, media_type=_with_charset(media))
            else:
                data, media, headers = answer
                response = Response(data, media_type=_with_charset(media))
            if "source" in headers:
                response.headers["X-TechKG-Answered-By"] = headers["source"]
            if headers.get("fallback"):  # why fresh analytics tables did not answer (ASCII: a header)
                response.headers["X-TechKG-Fallback"] = headers["fallback"].encode("ascii", "replace").decode()
            if headers.get("next"):
                next_url = request.url.include_query_params(after=headers["next"], limit=size)
                response.headers["Link"] = f'<{next_url}>; rel="next"'
            return response
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


def sparql_routes(store: GraphStore, settings: ServerSettings, runner: QueryRunner,
                  pool: WorkerPool) -> list[Route]:
    """The endpoint's routes: /sparql, /store, /queries, /queries/{name} and /queries/{name}.rq."""
    endpoint = Endpoint(store, settings, runner, pool)
    return [
        Route("/sparql", endpoint.sparql, methods=["GET", "POST"], name="sparql"),
        Route("/store", endpoint.graph_store, methods=["GET"], name="graph_store"),
        Route("/queries", endpoint.query_list, methods=["GET"], name="queries"),
        Route("/queries/{name}.rq", endpoint.query_text, methods=["GET"], name="query_text"),
        Route("/queries/{name}", endpoint.named_query, methods=["GET", "POST"], name="named_query"),
    ]
