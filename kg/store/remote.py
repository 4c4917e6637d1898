"""A remote SPARQL 1.1 endpoint as the store: Oxigraph server, Fuseki, GraphDB, Virtuoso,
QLever, or another ``kg serve``.

The store is named by one string (``--store`` or ``KG_STORE``)::

    http://localhost:7878/query;update=http://localhost:7878/update;gsp=http://localhost:7878/store

The query URL comes first; ``update=`` and ``gsp=`` (the Graph Store Protocol URL)
may be absolute or relative to it. Without ``update=``, a query URL ending in
``/query`` implies ``.../update`` and any other URL takes updates itself. Other keys:
``union=true|false`` (whether the server's default graph is already the union of
its named graphs; detected when absent) and ``timeout=SECONDS``. A bearer token for
the server goes in ``KG_STORE_TOKEN``, never in the spec, so it cannot leak into
messages; a user and password may be given in the URL and are hidden the same way.

Everything TechKG does goes through the five primitives of :class:`GraphStore`:

- queries are POSTed with the SPARQL 1.1 Protocol. They see the union of the named
  graphs: either the server's default graph is that union, or every named graph is
  passed as ``default-graph-uri`` and ``named-graph-uri``;
- bindings arrive as ``VALUES`` blocks of serialised terms (:mod:`kg.sparqltext`);
- ``update`` is one request, which the server applies atomically;
- ``load_file`` uploads into a hidden staging graph (with the Graph Store Protocol,
  or with chunked ``INSERT DATA`` requests), then swaps it in with one atomic update,
  so a failure at any point leaves the target graph as it was.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
import pyoxigraph as ox

from kg import __version__, rdfxml
from kg.errors import KGError, QueryError, RDFImportError, RemoteStoreError, StoreError
from kg.iris import skolem
from kg.results import QueryResult, Solutions, Term
from kg.sparqlerrors import predeclared, syntax_error, undeclared_prefixes
from kg.sparqlguard import names_dataset
from kg.sparqltext import inject_values
from kg.store.base import Activity, Dataset, GraphStore, prefix_block, provenance_update
from kg.store.embedded import _STAGING, _file_digest, _open

__all__ = ["EndpointSpec", "RemoteStore", "parse_spec"]

#: Stands in for "no graph at all" when the store holds no named graph yet.
_NO_GRAPH = "urn:techkg:no-graph"
#: Seconds the list of named graphs is reused between queries (our own writes reset it).
_GRAPH_LIST_TTL = 2.0
_CHUNK = 20_000
_ACCEPT = (
    "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.8, "
    "application/sparql-results+xml;q=0.7"
)
_RESULT_TYPES = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "application/xml": ox.QueryResultsFormat.XML,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
_GRAPH_TYPES = {
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/plain": ox.RdfFormat.N_TRIPLES,
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD,
    "application/n-quads": ox.RdfFormat.N_QUADS,
    "application/trig": ox.RdfFormat.TRIG,
}
_ENDPOINT_HINT = (
    "Give the query URL itself, e.g. http://localhost:7878/query (Oxigraph server), "
    "http://localhost:3030/DATASET/query (Fuseki) or http://127.0.0.1:7879/sparql (kg serve)."
)


@dataclass(frozen=True)
class EndpointSpec:
    """The URLs and options of a remote store, parsed from a ``--store`` value."""

    query: str
    update: str
    gsp: str | None = None
    union: bool | None = None
    timeout: float = 300.0


def _check_url(url: str, key: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise StoreError(
            f"the store's {key} URL {redact(url)!r} is not an http(s) URL",
            hint="Write the store as QUERY_URL[;update=URL][;gsp=URL], e.g. "
            "http://localhost:7878/query;update=/update;gsp=/store",
        )
    return url


def parse_spec(value: str) -> EndpointSpec:
    """Parse ``QUERY_URL[;update=URL][;gsp=URL][;union=true|false][;timeout=S]``."""
    head, *options = [part.strip() for part in value.split(";")]
    query = _check_url(head, "query")
    settings: dict[str, str] = {}
    for option in options:
        if not option:
            continue
        key, sep, val = option.partition("=")
        key = key.strip().lower()
        if not sep or key not in ("update", "gsp", "union", "timeout"):
            raise StoreError(
                f"unknown store option {option!r} in {redact(value)!r}",
                hint="Options are ;update=URL, ;gsp=URL, ;union=true|false and ;timeout=SECONDS.",
            )
        settings[key] = val.strip()
    if "update" in settings:
        update = _check_url(urljoin(query, settings["update"]), "update")
    elif urlsplit(query).path.endswith("/query"):
        update = query[: query.rindex("/query")] + "/update"
    else:
        update = query
    gsp = _check_url(urljoin(query, settings["gsp"]), "gsp") if settings.get("gsp") else None
    union: bool | None = None
    if "union" in settings:
        if settings["union"].lower() not in ("true", "false"):
            raise StoreError(f"union={settings['union']!r} must be true or false",
                             hint="Leave it out to let TechKG detect it.")
        union = settings["union"].lower() == "true"
    timeout = 300.0
    if "timeout" in settings:
        try:
            timeout = float(settings["timeout"])
        except ValueError:
            raise StoreError(f"timeout={settings['timeout']!r} is not a number of seconds",
                             hint="Write e.g. ;timeout=120") from None
    return EndpointSpec(query, update, gsp, union, timeout)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and ``location``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class _ResponseReader(io.RawIOBase):
    """A streamed HTTP response body as a binary file, for pyoxigraph's parsers."""

    def __init__(self, response: httpx.Response) -> None:
        self._chunks = response.iter_bytes()
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


def _our_graphs(rows: list[dict[str, Term | None]]) -> list[ox.NamedNode]:
    """The named graphs in ``rows`` (variable ?g), staging graphs left out, sorted."""
    graphs = [g for g in (r.get("g") for r in rows) if isinstance(g, ox.NamedNode)]
    return sorted((g for g in graphs if not g.value.startswith(_STAGING)), key=lambda g: g.value)


def _media_type(response: httpx.Response) -> str:
    return str(response.headers.get("content-type", "")).split(";")[0].strip().lower()


class RemoteStore(GraphStore):
    """A SPARQL 1.1 Protocol endpoint (plus, optionally, a Graph Store Protocol one)."""

    def __init__(
        self,
        spec: EndpointSpec,
        *,
        token: str | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        self.spec = spec
        self.location = redact(spec.query)
        headers = {"User-Agent": f"TechKG/{__version__}"}
        token = token if token is not None else os.environ.get("KG_STORE_TOKEN")
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = client or httpx.Client(
            timeout=httpx.Timeout(spec.timeout, connect=10.0), headers=headers, follow_redirects=True
        )
        if client is not None:
            self._client.headers.update(headers)
        self._union = spec.union
        self._graph_list: tuple[float, list[str]] | None = None
        #: The endpoint's Server header, lower-cased, once it has answered.
        self._server = ""

    @classmethod
    def from_spec(cls, value: str) -> RemoteStore:
        """The store named by a ``--store`` / ``KG_STORE`` value (see the module docs)."""
        return cls(parse_spec(value))

    # -- HTTP ----------------------------------------------------------------------

    def _fail(self, response: httpx.Response, what: str, sparql: str | None = None) -> KGError:
        status = response.status_code
        url = redact(str(response.request.url).split("?")[0])
        try:
            body = response.read().decode("utf-8", "replace").strip()
        except httpx.HTTPError:
            body = ""
        body = re.sub(r"\s+", " ", body)[:500] or response.reason_phrase
        if status == 400 and what == "query":
            if sparql and undeclared_prefixes(sparql):
                return syntax_error(sparql, body)
            return QueryError(
                f"the SPARQL endpoint rejected the query: {body}",
                hint="Check the query against the SPARQL 1.1 grammar; predeclared prefixes: " + predeclared() + ".",
            )
        if what == "update" and (status == 400 or status >= 500):
            return RemoteStoreError(
                f"the endpoint rejected the update and nothing was written ({status}): {body}",
                url=url, status=status,
                hint="The server applies each update atomically, so the store is unchanged; "
                "fix the cause above and run the command again.",
            )
        if status in (401, 403):
            return RemoteStoreError(
                f"the endpoint at {url} refused the {what} ({status}): {body}",
                url=url, status=status,
                hint="Set KG_STORE_TOKEN to the server's token (for kg serve: the --token it was "
                "started with, together with --allow-update for writes), or put user:password "
                "in the URL.",
            )
        if status == 404:
            return RemoteStoreError(f"there is no SPARQL endpoint at {url} (404)", url=url,
                                    status=status, hint=_ENDPOINT_HINT)
        if status in (405, 415):
            return RemoteStoreError(
                f"{url} does not accept a SPARQL {what} ({status}): {body}", url=url, status=status,
                hint="Name the right URLs: QUERY_URL;update=UPDATE_URL;gsp=GRAPH_STORE_URL.",
            )
        if status in (413, 422, 429, 503):
            return RemoteStoreError(
                f"the endpoint refused the {what} ({status}): {body}", url=url, status=status,
                hint="The server applies a limit (size, time or load) named above. Retry later, "
                "or raise the limit on the server (for kg serve: --max-rows, --timeout, --workers).",
            )
        return RemoteStoreError(
            f"the endpoint failed on the {what} ({status}): {body}", url=url, status=status,
            hint="See the server's log. Updates are single atomic requests, so nothing was "
            "half-written.",
        )

    def _transport_error(self, exc: httpx.HTTPError, url: str, what: str) -> RemoteStoreError:
        where = redact(url)
        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
            return RemoteStoreError(
                f"the endpoint at {where} did not finish the {what} within {self.spec.timeout:g} s",
                url=where,
                hint="Raise the limit with ;timeout=SECONDS in the store spec, or make the "
                "request smaller.",
            )
        return RemoteStoreError(
            f"cannot reach the SPARQL endpoint at {where}: {exc}",
            url=where,
            hint="Check that the server is running and that the URL is right. "
            + _ENDPOINT_HINT + " Without --store / KG_STORE, TechKG uses its embedded store.",
        )

    def _post(self, url: str, what: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._client.post(url, **kwargs)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url, what) from None
        if response.status_code >= 300:
            raise self._fail(response, what)
        return response

    def _dataset(self) -> dict[str, list[str]]:
        """Protocol parameters that make the default graph the union of the named graphs."""
        if self._union is None:
            self._union = self._detect_union()
        if self._union:
            return {}
        now = time.monotonic()
        if self._graph_list is None or now - self._graph_list[0] > _GRAPH_LIST_TTL:
            self._graph_list = (now, [g.value for g in self._graph_names()] or [_NO_GRAPH])
        graphs = self._graph_list[1]
        return {"default-graph-uri": graphs, "named-graph-uri": graphs}

    def _raw_ask(self, sparql: str) -> bool:
        result = self._request_query(prefix_block(sparql) + sparql, {}, None)
        return bool(result)

    def _raw_select(self, sparql: str) -> list[dict[str, Term | None]]:
        """A SELECT over the server's own dataset (no union parameters)."""
        result = self._request_query(prefix_block(sparql) + sparql, {}, None)
        assert isinstance(result, Solutions)
        return result.rows

    def _detect_union(self) -> bool | None:
        """Whether the server's default graph already holds its named graphs' triples
        (Oxigraph --union-default-graph, GraphDB, Virtuoso, kg serve). None while the
        server holds no named graph to tell by."""
        rows = self._raw_select(
            "SELECT ?inDefault WHERE { { SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1 } "
            "BIND(EXISTS { ?s ?p ?o } AS ?inDefault) }"
        )
        if not rows or rows[0].get("inDefault") is None:
            return None
        value = rows[0]["inDefault"]
        return isinstance(value, ox.Literal) and value.value in ("true", "1")

    def _graph_names(self) -> list[ox.NamedNode]:
        rows = self._raw_select("SELECT DISTINCT ?g WHERE { GRAPH ?g { } }")
        return _our_graphs(rows)

    def _request_query(
        self, text: str, dataset: Mapping[str, list[str]], max_rows: int | None
    ) -> QueryResult:
        url = self.spec.query
        try:
            with self._client.stream(
                "POST", url, data={"query": text, **dataset}, headers={"Accept": _ACCEPT}
            ) as response:
                if response.status_code >= 300:
                    raise self._fail(response, "query", text)
                self._server = response.headers.get("server", "").lower()
                media = _media_type(response)
                reader = io.BufferedReader(_ResponseReader(response))
                if media in _RESULT_TYPES:
                    parsed = ox.parse_query_results(reader, _RESULT_TYPES[media])
                    if isinstance(parsed, ox.QueryBoolean):
                        return bool(parsed)
                    return Solutions.from_pyoxigraph(parsed, max_rows)
                if media in _GRAPH_TYPES:
                    return [ox.Triple(q.subject, q.predicate, q.object)
                            for q in rdfxml.parse(reader, _GRAPH_TYPES[media], source=self.location)]
                raise RemoteStoreError(
                    f"the endpoint at {self.location} answered with {media or 'no content type'}, "
                    "not SPARQL results",
                    url=self.location, status=response.status_code, hint=_ENDPOINT_HINT,
                )
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url, "query") from None
        except SyntaxError as exc:
            raise RemoteStoreError(
                f"the endpoint's answer could not be parsed: {exc}", url=self.location,
                hint="The server probably stopped in the middle of its answer (its own query "
                "timeout, for instance) and wrote an error into it; see the server's log.",
            ) from None

    # -- primitives ----------------------------------------------------------------

    def _query(
        self, sparql: str, bindings: Mapping[str, Term] | None, max_rows: int | None
    ) -> QueryResult:
        text = prefix_block(sparql) + sparql
        if bindings:  # GraphStore.query has already inlined them; direct callers may not
            text = inject_values(text, bindings)
        # The query's own FROM / FROM NAMED win over the union parameters.
        return self._request_query(text, {} if names_dataset(sparql) else self._dataset(), max_rows)

    def _query_dataset(self, sparql: str, dataset: Dataset, max_rows: int | None) -> QueryResult:
        params = {"default-graph-uri": [g.value for g in dataset.default] or [_NO_GRAPH],
                  "named-graph-uri": [g.value for g in dataset.named] or [_NO_GRAPH]}
        return self._request_query(prefix_block(sparql) + sparql, params, max_rows)

    def select_to_file(self, sparql: str, path: Path, *, fmt: str = "csv") -> None:
        """Stream the endpoint's own SPARQL results (csv, tsv, json, xml) into ``path``."""
        media = {"csv": "text/csv", "tsv": "text/tab-separated-values",
                 "json": "application/sparql-results+json", "xml": "application/sparql-results+xml"}
        if fmt not in media:
            raise ValueError(f"unknown results format {fmt!r}; use one of {', '.join(media)}")
        url = self.spec.query
        data = {"query": prefix_block(sparql) + sparql, **({} if names_dataset(sparql) else self._dataset())}
        try:
            with self._client.stream("POST", url, data=data, headers={"Accept": media[fmt]}) as response:
                if response.status_code >= 300:
                    raise self._fail(response, "query", sparql)
                if _media_type(response) != media[fmt]:
                    raise RemoteStoreError(
                        f"the endpoint answered {_media_type(response) or 'no content type'}, not {media[fmt]}",
                        url=self.location, hint="Ask for another format, or use a SELECT query.",
                    )
                with path.open("wb") as out:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url, "query") from None

    def update(self, sparql: str) -> None:
        try:
            self._post(
                self.spec.update, "update",
                content=(prefix_block(sparql) + sparql).encode("utf-8"),
                headers={"Content-Type": "application/sparql-update; charset=utf-8"},
            )
        finally:
            self._graph_list = None  # the write may have added or dropped graphs

    def load_file(
        self, path: Path, *, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool, activity: Activity
    ) -> int:
        """Upload ``path`` into ``graph``, replacing it, as the embedded store does.

        An empty target graph is loaded directly, and a failure removes what was loaded.
        A non-empty one is uploaded into a hidden staging graph first and swapped in by
        one atomic update, so a failure at any point leaves the old graph as it was.
        Quad formats are flattened into ``graph``. Without a Graph Store Protocol URL
        the triples go up in chunked ``INSERT DATA`` requests; blank nodes are then
        skolemized so that one node stays one node across chunks."""
        if fmt == ox.RdfFormat.RDF_XML:
            rdfxml.check(path, gzipped=gzipped)  # no entity bombs reach the parser
        direct = not self._raw_ask(f"ASK {{ GRAPH {graph} {{ ?s ?p ?o }} }}")
        target = graph if direct else ox.NamedNode(_STAGING + uuid.uuid4().hex)
        try:
            with _open(path, gzipped) as stream:
                triples = (ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(stream, format=fmt))
                if self.spec.gsp:
                    self._gsp_put(target, triples)
                else:
                    self._insert_chunks(target, triples)
            count = self._staged_count(target)
        except (SyntaxError, ValueError, OSError, EOFError) as exc:
            self._drop_quietly(target)
            raise RDFImportError(
                f"could not load it as {fmt.name}: {exc}",
                path=str(path),
                hint="Nothing was changed in the store. Fix the file, or pass --format if the "
                "file extension does not match its syntax.",
            ) from None
        except BaseException:
            self._drop_quietly(target)
            raise
        activity.stats.setdefault("triples", count)
        ops = []
        if not direct:
            ops.append(f"DROP SILENT GRAPH {graph}")
            ops.append(f"MOVE SILENT {target} TO {graph}" if count else f"DROP SILENT GRAPH {target}")
        ops.append(provenance_update(activity, {graph: (_file_digest(path), count)}, activity.started))
        try:
            self.update(" ;\n".join(ops))
        except BaseException:
            self._drop_quietly(target)
            raise
        return count

    def _gsp_put(self, target: ox.NamedNode, triples: Iterator[ox.Triple]) -> None:
        """PUT the triples into ``target`` (an empty or staging graph) with the Graph Store
        Protocol, streamed as N-Triples. An Oxigraph server is asked for its bulk loader
        (``no_transaction``): the target is new, and a failure drops it anyway."""

        def body() -> Iterator[bytes]:
            batch: list[str] = []
            for t in triples:
                batch.append(f"{t.subject} {t.predicate} {t.object} .\n")
                if len(batch) >= 5000:
                    yield "".join(batch).encode("utf-8")
                    batch = []
            if batch:
                yield "".join(batch).encode("utf-8")

        assert self.spec.gsp is not None
        params = {"graph": target.value}
        if self._server.startswith("oxigraph"):
            params["no_transaction"] = ""
        try:
            response = self._client.put(
                self.spec.gsp, params=params, content=body(),
                headers={"Content-Type": "application/n-triples"},
            )
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, self.spec.gsp, "upload") from None
        if response.status_code >= 300:
            raise self._fail(response, "upload")

    def _insert_chunks(self, staging: ox.NamedNode, triples: Iterator[ox.Triple]) -> None:
        load = uuid.uuid4().hex

        def plain(term: Any) -> Any:
            return skolem("load", load, term.value) if isinstance(term, ox.BlankNode) else term

        batch: list[str] = []

        def flush() -> None:
            if batch:
                self.update(f"INSERT DATA {{ GRAPH {staging} {{\n" + "".join(batch) + "} }")
                batch.clear()

        for t in triples:
            batch.append(f"{plain(t.subject)} {t.predicate} {plain(t.object)} .\n")
            if len(batch) >= _CHUNK:
                flush()
        flush()

    def _staged_count(self, staging: ox.NamedNode) -> int:
        rows = self._raw_select(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {staging} {{ ?s ?p ?o }} }}")
        value = rows[0]["n"] if rows else None
        return int(value.value) if isinstance(value, ox.Literal) else 0

    def _drop_quietly(self, graph: ox.NamedNode) -> None:
        """Drop what a failed upload left in ``graph``. The server may still be finishing
        the aborted upload, so check again for a moment and drop anything that lands."""
        try:
            for _ in range(5):
                self.update(f"DROP SILENT GRAPH {graph}")
                time.sleep(0.1)
                if not self._raw_ask(f"ASK {{ GRAPH {graph} {{ ?s ?p ?o }} }}"):
                    return
        except KGError:
            pass  # the original error is the one to report

    def dump(self, out: IO[bytes], *, fmt: ox.RdfFormat, graph: ox.NamedNode | None = None) -> None:
        quads = fmt in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG)
        if graph is None and not quads:
            out.write(ox.serialize(self.triples(), format=fmt) or b"")
            return
        graphs = [graph] if graph is not None else self.named_graphs()

        def as_quads() -> Iterator[ox.Quad]:
            for g in graphs:
                for t in self._graph_triples(g):
                    yield ox.Quad(t.subject, t.predicate, t.object, g)

        def as_triples() -> Iterator[ox.Triple]:
            for g in graphs:
                yield from self._graph_triples(g)

        if quads:
            ox.serialize(as_quads(), out, fmt)
        else:
            ox.serialize(as_triples(), out, fmt)

    def _graph_triples(self, graph: ox.NamedNode) -> Iterator[ox.Triple]:
        """One graph's triples, spooled to disk so a large graph never sits in memory twice."""
        with tempfile.SpooledTemporaryFile(max_size=64 << 20) as spool:
            url = self.spec.query
            data: dict[str, Any] = {"query": f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}"}
            try:
                with self._client.stream("POST", url, data=data,
                                         headers={"Accept": "application/n-triples"}) as response:
                    if response.status_code >= 300:
                        raise self._fail(response, "query")
                    media = _media_type(response)
                    for chunk in response.iter_bytes():
                        spool.write(chunk)
            except httpx.HTTPError as exc:
                raise self._transport_error(exc, url, "query") from None
            spool.seek(0)
            for q in rdfxml.parse(spool, _GRAPH_TYPES.get(media, ox.RdfFormat.N_TRIPLES), source=self.location):
                yield ox.Triple(q.subject, q.predicate, q.object)

    def named_graphs(self) -> list[ox.NamedNode]:
        rows = self._raw_select(
            "SELECT DISTINCT ?g WHERE { GRAPH ?g { } FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }"
        )
        return _our_graphs(rows)

    def close(self) -> None:
        self._client.close()
