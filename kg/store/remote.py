"""A remote SPARQL 1.1 endpoint as the store: Oxigraph server, Virtuoso, Fuseki, GraphDB,
QLever, or another ``kg serve``. Oxigraph and Virtuoso 7 are tested (``tests/contract``).

The store is named by one string (``--store`` or ``KG_STORE``)::

    http://localhost:7878/query;update=http://localhost:7878/update;gsp=http://localhost:7878/store

The query URL comes first; ``update=`` and ``gsp=`` (the Graph Store Protocol URL)
may be absolute or relative to it. Without ``update=``, a query URL ending in
``/query`` implies ``.../update`` and any other URL takes updates itself. Other keys:
``union=true|false`` (whether the server's default graph is already the union of
TechKG's named graphs; detected when absent) and ``timeout=SECONDS``. A bearer token
for the server goes in ``KG_STORE_TOKEN``, never in the spec, so it cannot leak into
messages; a user and password may be given in the URL and are hidden the same way.

Everything TechKG does goes through the primitives of :class:`GraphStore`, made
portable here with what :class:`~kg.store.capabilities.Capabilities` finds out about
the server:

- Reads are POSTed with the SPARQL 1.1 Protocol, with an Accept header for the query
  form. They see the union of TechKG's own graphs only (``kg.graphs.is_own_graph``
  or described by the provenance graph): a server's system graphs (Virtuoso's
  virtrdf#, ...) and staging graphs never appear. The union is the server's default
  graph when that already is exactly this union; otherwise every graph is named with
  ``default-graph-uri`` / ``named-graph-uri``. A query with its own FROM keeps it.
- An answer cut at the server's row cap (Virtuoso's ``ResultSetMaxRows``, seen in
  its ``X-SPARQL-MaxRows`` header or by a probe) is fetched again page by page with
  LIMIT / OFFSET and checked against a count; one that cannot be paged is an error,
  never a silently short answer.
- Where the server mishandles VALUES bindings (Virtuoso 7 ignores them beside a property
  path, drops OPTIONALs and misjoins sub-selects beside them), single terms are written
  into the query as constants instead (as equality filters where its planner refuses
  the constants); where it cannot ORDER BY an aggregate's alias, the ordering moves
  outside a sub-select; where a BIND may not end an OPTIONAL, it moves after it
  (:mod:`kg.sparqltext`). Either way the answers are the same.
- A transaction is one update request when it fits the server's limit; otherwise it
  is staged (:mod:`kg.store.staging`) and swapped in by one small request, so it
  stays atomic. Every write is checked afterwards by counting what arrived.
- ``load_file`` always uploads into a staging graph (Graph Store Protocol with a
  Content-Length, or chunked ``INSERT DATA``), counts it, and swaps it in with one
  update. Without ``gsp=``, Virtuoso's own Graph Store endpoint is tried first (its
  INSERT DATA runs at a few hundred triples a second). A staging graph whose lease
  has run out (its process was killed) is dropped the next time a store is opened on
  the server, with a warning.
"""

from __future__ import annotations

import io
import logging
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
import pyoxigraph as ox

from kg import __version__, rdfxml
from kg.errors import KGError, QueryError, RDFImportError, RemoteStoreError, StoreError
from kg.graphs import PROVENANCE, is_own_graph
from kg.results import QueryResult, Solutions, Term, canonical_term
from kg.sparqlerrors import predeclared, syntax_error, undeclared_prefixes
from kg.sparqlguard import names_dataset
from kg.sparqltext import (
    binds_after_optionals,
    inject_values,
    order_outside,
    paged,
    query_form,
    query_parts,
    same_term_as_equality,
    unsliced,
    values_after_unions,
    values_as_constants,
    values_as_filters,
)
from kg.store import staging
from kg.store.base import Activity, Dataset, GraphStore, Progress, prefix_block, provenance_update
from kg.store.capabilities import (
    ORDER_BY_ALIAS_PROBE,
    SAME_TERM_PROBE,
    VALUES_PATH_PROBE,
    Capabilities,
    row_probe,
)
from kg.store.embedded import _file_digest, _open
from kg.vocab import PROV

__all__ = ["EndpointSpec", "RemoteStore", "parse_spec"]

log = logging.getLogger("kg.store")

#: Stands in for "no graph at all" when the store holds no named graph yet.
_NO_GRAPH = "urn:techkg:no-graph"
#: Seconds the list of named graphs is reused (our own writes reset it; others' show after this).
_GRAPH_LIST_TTL = 10.0
#: Triples per INSERT DATA request of an upload without the Graph Store Protocol, where
#: the server names no limit of its own.
_CHUNK = 20_000
#: Answers shorter than this are never suspected of having been cut at a row cap.
_CAP_FLOOR = 1000
def _lease(timeout: float) -> float:
    """Seconds a staging graph's lease lasts: renewed every third of it while a write runs,
    it outlives the longest request (``timeout``) between renewals."""
    return 2 * timeout + 10
#: The Accept header per query form: what the form can answer, preferred first.
_ACCEPT = {
    "SELECT": "application/sparql-results+json, application/sparql-results+xml;q=0.9, "
              "text/tab-separated-values;q=0.5",
    "ASK": "application/sparql-results+json, application/sparql-results+xml;q=0.9",
    "CONSTRUCT": "application/n-triples, text/turtle;q=0.9, application/rdf+xml;q=0.5, application/ld+json;q=0.4",
}
_ACCEPT["DESCRIBE"] = _ACCEPT["CONSTRUCT"]
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
    "http://localhost:8890/sparql (Virtuoso), http://localhost:3030/DATASET/query (Fuseki) "
    "or http://127.0.0.1:7879/sparql (kg serve)."
)
#: What a server says when it refuses an update for want of a permission.
_PERMISSION = re.compile(r"(?i)SR186|SECURITY:|no permission|permission denied|access denied|not authori[sz]ed|"
                         r"forbidden|read-?only")
#: What a server says when an update is too large for it (Virtuoso: SP031 ... exceeded).
_TOO_LARGE = re.compile(r"(?i)SP031.*exceeded|too large|too long|request entity|payload")
#: Virtuoso's refusal of a query on its cost estimate (MaxQueryCostEstimationTime).
_ESTIMATE = re.compile(r"estimated execution time (\d+) \(sec\) exceeds the limit of (\d+)")
#: A VALUES block, as kg.sparqltext.inject_values writes them.
_HAS_VALUES = re.compile(r"(?i)\bVALUES\s*\(")
#: Data triples per request when a transaction is staged for atomicity alone.
_STAGED_TRIPLES = 5000
_SAME_TERM = re.compile(r"(?i)\bsameTerm\s*\(")
#: Virtuoso's own compiler failing on a query it parsed ("SQ156 ... Internal Optimized compiler error").
_COMPILER = re.compile(r"SQ156|Internal Optimized compiler error")
#: Virtuoso's refusal to sort more rows than its cap in one query (SR353 ... Only 10000 are allowed).
_SORT_CAP = re.compile(r"SR353.*?Only (\d+) are allowed")
_GRANT_HINT = (
    "The server refuses updates from this user. Grant them: on Virtuoso run "
    "isql-vt 1111 dba PASSWORD exec='GRANT SPARQL_UPDATE TO \"SPARQL\";' (the anonymous "
    "/sparql endpoint's user); on Fuseki start the dataset with --update; on kg serve use "
    "--allow-update and set KG_STORE_TOKEN to its --token."
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


def _media_type(response: httpx.Response) -> str:
    return str(response.headers.get("content-type", "")).split(";")[0].strip().lower()


def _page_title(body: str) -> str:
    """What an HTML page is about, for a message: its title, else its first words."""
    m = re.search(r"(?is)<title[^>]*>(.*?)</title>", body)
    words = re.sub(r"(?s)<[^>]*>", " ", m.group(1) if m else body)
    return re.sub(r"\s+", " ", words).strip()[:120]


def _counted(triples: Iterator[ox.Triple], progress: Progress | None, every: int = 10_000) -> Iterator[ox.Triple]:
    """``triples``, telling ``progress`` how many were read (step ``parsing``)."""
    if progress is None:
        yield from triples
        return
    done = 0
    for triple in triples:
        yield triple
        done += 1
        if done % every == 0:
            progress("parsing", done, 0)
    progress("parsing", done, done)


def _spool_ntriples(triples: Iterable[ox.Triple], spool: IO[bytes]) -> int:
    """Write ``triples`` to ``spool`` as N-Triples; returns how many distinct ones."""
    seen: set[int] = set()
    batch: list[str] = []
    for t in triples:
        seen.add(hash(t))
        batch.append(f"{t.subject} {t.predicate} {t.object} .\n")
        if len(batch) >= 5000:
            spool.write("".join(batch).encode("utf-8"))
            batch = []
    spool.write("".join(batch).encode("utf-8"))
    return len(seen)


def _weight(operation: str) -> int:
    """Data triples in an update operation (one per N-Triples line), or 1 for any other."""
    if operation.startswith(("INSERT DATA", "DELETE DATA")):
        return max(1, operation.count("\n") - 1)
    return 1


@dataclass
class _Answer:
    """One answer from the endpoint: the result, its length, and whether the server said
    that it cut it at its row cap."""

    result: QueryResult
    length: int
    capped: bool


class RemoteStore(GraphStore):
    """A SPARQL 1.1 Protocol endpoint (plus, optionally, a Graph Store Protocol one)."""

    batches_queries = True

    @property
    def query_batch(self) -> int:  # type: ignore[override]
        """Questions sent as one UNION (kg.validate): Virtuoso 7 compiles a UNION of many
        sub-selects more slowly than it answers them one by one."""
        return 1 if self.capabilities.server == "virtuoso" else 40

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
        #: What the server does; settled once per store (see kg.store.capabilities).
        self.capabilities = Capabilities()
        #: Whether queries may use the server's default graph as the union (None: not known yet).
        self._server_union: bool | None = spec.union
        self._graph_list: tuple[float, list[ox.NamedNode], list[ox.NamedNode]] | None = None
        self._started = False

    @classmethod
    def from_spec(cls, value: str) -> RemoteStore:
        """The store named by a ``--store`` / ``KG_STORE`` value (see the module docs)."""
        return cls(parse_spec(value))

    # -- HTTP ----------------------------------------------------------------------

    def _fail(self, response: httpx.Response, what: str, sparql: str | None = None) -> KGError:
        status = response.status_code
        url = redact(str(response.request.url).split("?")[0])
        try:
            raw = response.read().decode("utf-8", "replace").strip()
        except httpx.HTTPError:
            raw = ""
        html = _media_type(response) in ("text/html", "application/xhtml+xml")
        body = (_page_title(raw) if html else re.sub(r"\s+", " ", raw)[:500]) or response.reason_phrase
        if what in ("update", "upload") and _PERMISSION.search(body) and status != 404:
            return RemoteStoreError(
                f"the endpoint at {url} refused the {what} for want of a permission ({status}): {body}",
                url=url, status=status, hint=_GRANT_HINT)
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
        self.capabilities.saw_server(response.headers.get("server", ""))
        if response.status_code >= 300:
            raise self._fail(response, what)
        return response

    def _request(self, text: str, dataset: Mapping[str, list[str]], form: str,
                 max_rows: int | None = None) -> _Answer:
        """POST one query; parse the answer by its content type."""
        url = self.spec.query
        try:
            with self._client.stream(
                "POST", url, data={"query": text, **dataset}, headers={"Accept": _ACCEPT[form]}
            ) as response:
                self.capabilities.saw_server(response.headers.get("server", ""))
                if response.status_code >= 300:
                    raise self._fail(response, "query", text)
                cap = response.headers.get("x-sparql-maxrows")
                if cap and cap.isdigit():
                    self.capabilities.row_cap = int(cap)
                media = _media_type(response)
                reader = io.BufferedReader(_ResponseReader(response))
                if media in _RESULT_TYPES:
                    parsed = ox.parse_query_results(reader, _RESULT_TYPES[media])
                    if isinstance(parsed, ox.QueryBoolean):
                        return _Answer(bool(parsed), 1, False)
                    solutions = Solutions.from_pyoxigraph(parsed, max_rows, canonical=True)  # Virtuoso's 1/0
                    return _Answer(solutions, len(solutions), bool(cap) and not solutions.truncated)
                if media in _GRAPH_TYPES:
                    triples = [ox.Triple(q.subject, q.predicate, canonical_term(q.object))  # type: ignore[arg-type]
                               for q in rdfxml.parse(reader, _GRAPH_TYPES[media], source=self.location)]
                    return _Answer(triples, len(triples), bool(cap))
                if media in ("text/html", "application/xhtml+xml"):
                    page = _page_title(response.read().decode("utf-8", "replace"))
                    raise RemoteStoreError(
                        f"the endpoint at {self.location} answered with an HTML page ({page!r}), "
                        "not SPARQL results",
                        url=self.location, status=response.status_code,
                        hint="That URL serves a web page, not the SPARQL protocol. " + _ENDPOINT_HINT)
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

    def _raw_select(self, sparql: str) -> Solutions:
        """A SELECT over the server's own dataset (no union parameters, no paging)."""
        result = self._request(prefix_block(sparql) + sparql, {}, "SELECT").result
        assert isinstance(result, Solutions)
        return result

    def _raw_ask(self, sparql: str) -> bool:
        return bool(self._request(prefix_block(sparql) + sparql, {}, "ASK").result)

    def _probe(self, sparql: str) -> Solutions | None:
        """A probe query's answer, or None when the server rejects it (400 or 500)."""
        try:
            return self._raw_select(sparql)
        except QueryError:
            return None
        except RemoteStoreError as exc:
            if exc.status in (400, 500):
                return None
            raise

    # -- start: stale staging graphs -------------------------------------------------

    def _start(self) -> None:
        """Once per store: drop the staging graphs that killed processes left behind."""
        if self._started:
            return
        self._started = True
        for graph in self._listing()[0]:
            if not graph.value.startswith(staging.STAGING):
                continue
            rows = self._raw_select(f"SELECT ?e WHERE {{ GRAPH {graph} {{ {graph} {staging.LEASE} ?e }} }}")
            expiry = rows.rows[0]["e"] if rows.rows else None
            if isinstance(expiry, ox.Literal) and expiry.value.isdigit() and int(expiry.value) > time.time():
                continue  # another process is filling it
            size = self._graph_count(graph)
            self.update(f"DROP SILENT GRAPH {graph}")
            log.warning("dropped %s, a staging graph of %d triples left by an interrupted write to %s",
                        graph.value, size, self.location)

    # -- the union of TechKG's graphs ------------------------------------------------

    def _all_graphs(self) -> list[ox.NamedNode]:
        """Every non-empty named graph on the server, the server's own included (asked now).
        GROUP BY, not DISTINCT: Virtuoso 7 answers the same question twenty times faster so."""
        rows = self._raw_select("SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g")
        return [g for g in rows.values("g") if isinstance(g, ox.NamedNode)]

    def _listing(self) -> tuple[list[ox.NamedNode], list[ox.NamedNode]]:
        """Every named graph on the server, and TechKG's among them: those it names itself
        and those its provenance graph describes (an import under a full IRI, say), no
        staging graph. Listed once and kept until this store writes, or for
        ``_GRAPH_LIST_TTL`` seconds (another process may add a graph)."""
        now = time.monotonic()
        if self._graph_list is None or now - self._graph_list[0] > _GRAPH_LIST_TTL:
            every = self._all_graphs()
            described = {g for g in self._raw_select(
                f"SELECT DISTINCT ?g WHERE {{ GRAPH {PROVENANCE} {{ ?g a {PROV.Bundle} }} }}").values("g")}
            own = sorted((g for g in every
                          if not g.value.startswith(staging.STAGING) and (is_own_graph(g) or g in described)),
                         key=lambda g: g.value)
            self._graph_list = (now, every, own)
        return self._graph_list[1], self._graph_list[2]

    def _dataset(self) -> dict[str, list[str]]:
        """Protocol parameters that make the default graph the union of TechKG's graphs."""
        self._start()
        if self._server_union is None:
            detected = self._detect_union()
            self.capabilities.union_default = detected
            if detected:  # usable only if nothing else lives on the server
                every, own = self._listing()
                self._server_union = len(own) == len(every)
        if self._server_union:
            return {}
        graphs = [g.value for g in self._listing()[1]] or [_NO_GRAPH]
        return {"default-graph-uri": graphs, "named-graph-uri": graphs}

    def _detect_union(self) -> bool | None:
        """Whether the server's default graph already holds its named graphs' triples
        (Oxigraph --union-default-graph, GraphDB, Virtuoso, kg serve). None while the
        server holds no named graph to tell by."""
        rows = self._raw_select(
            "SELECT ?inDefault WHERE { { SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1 } "
            "BIND(EXISTS { ?s ?p ?o } AS ?inDefault) }"
        ).rows
        if not rows or rows[0].get("inDefault") is None:
            return None
        value = rows[0]["inDefault"]
        return isinstance(value, ox.Literal) and value.value in ("true", "1")

    def named_graphs(self) -> list[ox.NamedNode]:
        self._start()
        return list(self._listing()[1])

    def count(self, graph: ox.NamedNode | None = None) -> int:
        """Triples in one named graph (asked of the server's whole dataset: Virtuoso counts
        one for a graph the protocol's dataset leaves out), or quads over TechKG's graphs."""
        self._start()
        return super().count() if graph is None else self._graph_count(graph)

    # -- reads -----------------------------------------------------------------------

    def _values_bind(self) -> bool:
        caps = self.capabilities
        if caps.values_bind is None:
            rows = self._probe(VALUES_PATH_PROBE)
            # The zero-length path gives the bound node itself, or nothing where a server
            # matches only nodes of the data; what it must not do is fail or answer more.
            caps.values_bind = rows is not None and rows.values("x") in (
                [], [ox.NamedNode("urn:techkg:probe:a")])
        return caps.values_bind

    def _orders_by_alias(self) -> bool:
        caps = self.capabilities
        if caps.order_by_alias is None:
            rows = self._probe(ORDER_BY_ALIAS_PROBE)
            caps.order_by_alias = rows is not None and [
                (getattr(r["x"], "value", None), getattr(r["n"], "value", None)) for r in rows
            ] == [("2", "3"), ("1", "5")]
        return caps.order_by_alias

    def _same_term(self) -> bool:
        caps = self.capabilities
        if caps.same_term is None:
            rows = self._probe(SAME_TERM_PROBE)
            caps.same_term = rows is None or len(rows) == 1
        return caps.same_term

    def _rewrite(self, text: str, form: str) -> str:
        """``text`` as this server needs it to give the standard answers."""
        if _SAME_TERM.search(text) and not self._same_term():
            text = same_term_as_equality(text)
        if self.capabilities.optional_bind is False:
            text = binds_after_optionals(text)
        if form != "SELECT":
            return text
        parts = query_parts(text)
        if parts.order_by is None or parts.group is None:
            return text
        code = text[parts.form_start : parts.group[0]] + text[parts.group[1] : parts.order_by[0]]
        aggregated = re.search(r"(?i)\b(GROUP\s+BY|COUNT|SUM|MIN|MAX|AVG|SAMPLE|GROUP_CONCAT)\b", code)
        if aggregated and not self._orders_by_alias():
            return order_outside(text)
        return text

    def _query(
        self, sparql: str, bindings: Mapping[str, Term] | None, max_rows: int | None
    ) -> QueryResult:
        text = prefix_block(sparql) + sparql
        if bindings:  # GraphStore.query has already inlined them; direct callers may not
            text = inject_values(text, bindings)
        # The query's own FROM / FROM NAMED win over the union parameters.
        return self._answer_forms(text, {} if names_dataset(sparql) else self._dataset(), max_rows)

    def _query_dataset(self, sparql: str, dataset: Dataset, max_rows: int | None) -> QueryResult:
        params = {"default-graph-uri": [g.value for g in dataset.default] or [_NO_GRAPH],
                  "named-graph-uri": [g.value for g in dataset.named] or [_NO_GRAPH]}
        return self._answer_forms(prefix_block(sparql) + sparql, params, max_rows)

    def _answer_forms(self, text: str, dataset: Mapping[str, list[str]], max_rows: int | None) -> QueryResult:
        """The answer to ``text`` in the first of its forms (see :meth:`_rewrite`) that this
        server takes."""
        form = query_form(text)
        if _HAS_VALUES.search(text):  # the same solutions; Virtuoso 7 ignores VALUES beside a UNION and an OPTIONAL
            text = values_after_unions(text)
        forms = [self._rewrite(text, form)]
        if _HAS_VALUES.search(text) and not self._values_bind():
            # The bindings as constants first, then as equality filters where those are the
            # same, the VALUES blocks last.
            rewritten = [values_as_constants(text), values_as_filters(text)]
            forms[:0] = [self._rewrite(t, form) for t in dict.fromkeys(rewritten) if t != text]
        for attempt, candidate in enumerate(forms):
            try:
                return self._answer(candidate, dataset, form, max_rows)
            except RemoteStoreError as exc:
                if attempt == len(forms) - 1 or not (_ESTIMATE.search(str(exc)) or _COMPILER.search(str(exc))):
                    raise
                # Its planner refuses this form (Virtuoso estimates many OPTIONALs about one
                # constant subject as a cross product): try the next.
        raise AssertionError("unreachable")

    def _answer(self, text: str, dataset: Mapping[str, list[str]], form: str, max_rows: int | None) -> QueryResult:
        """The whole answer to ``text``: paged where the server cuts it."""
        try:
            answer = self._estimated(text, dataset, form, max_rows)
        except RemoteStoreError as exc:
            refused = _SORT_CAP.search(str(exc))  # Virtuoso will not sort past its cap at once
            if refused is None or form not in ("SELECT", "CONSTRUCT"):
                raise
            self.capabilities.row_cap = self.capabilities.row_cap or int(refused.group(1))
            return self._paged(text, dataset, form, max_rows, self.capabilities.row_cap)
        if self._was_cut(answer):
            return self._paged(text, dataset, form, max_rows, answer.length)
        return answer.result

    def _estimated(self, text: str, dataset: Mapping[str, list[str]], form: str, max_rows: int | None) -> _Answer:
        """:meth:`_request`, asked again (twice at most, a moment later) when Virtuoso refuses
        the query on a cost estimate within a hundred times its limit: the estimate comes
        from sampling and varies from one compilation to the next (and with the machine's
        load), more than the query's real cost does."""
        for attempt in range(3):
            try:
                return self._request(text, dataset, form, max_rows)
            except RemoteStoreError as exc:
                refused = _ESTIMATE.search(str(exc))
                if not refused:
                    raise
                estimate, limit = int(refused.group(1)), int(refused.group(2))
                if attempt == 2 or not limit < estimate < 100 * limit:  # far off (or overflowed): no use asking again
                    raise RemoteStoreError(
                        str(exc), url=exc.url, status=exc.status,
                        hint="The server refused the query on its own estimate of the cost. "
                        "Raise the limit (Virtuoso: MaxQueryCostEstimationTime in the [SPARQL] section "
                        "of virtuoso.ini), or narrow the query.") from None
                time.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")

    def _was_cut(self, answer: _Answer) -> bool:
        """Whether the server cut ``answer`` at its row cap."""
        caps = self.capabilities
        if isinstance(answer.result, bool) or (isinstance(answer.result, Solutions) and answer.result.truncated):
            return False
        if answer.capped or (caps.row_cap is not None and answer.length >= caps.row_cap):
            return True  # (Virtuoso gives a CONSTRUCT one triple past its cap)
        if caps.row_cap is None and answer.length >= _CAP_FLOOR and answer.length > caps.uncapped:
            probe = self._probe(row_probe(answer.length + 1))
            if probe is not None and len(probe) <= answer.length:
                caps.row_cap = len(probe)
                return True
            caps.uncapped = len(probe) if probe is not None else caps.uncapped
        return False

    def _cut_error(self, cap: int, why: str) -> RemoteStoreError:
        return RemoteStoreError(
            f"the endpoint at {self.location} cut its answer at {cap} rows (its result limit) and {why}",
            url=self.location,
            hint="Raise the server's limit (Virtuoso: ResultSetMaxRows in the [SPARQL] section of "
            "virtuoso.ini), or narrow the query.",
        )

    def _count(self, text: str, dataset: Mapping[str, list[str]], form: str) -> int:
        """How many solutions ``text`` (a SELECT or CONSTRUCT) has, by the server's count."""
        whole, limit, offset = unsliced(text)  # a server that caps answers may refuse to sort past the cap
        parts = query_parts(whole)
        assert parts.group is not None
        if form == "SELECT":
            inner = whole[len(parts.prologue) :]
        else:
            inner = "SELECT * WHERE " + whole[parts.group[0] :]
        answer = self._request(f"{parts.prologue}SELECT (COUNT(*) AS ?n) WHERE {{ {{\n{inner}\n}} }}",
                               dataset, "SELECT")
        assert isinstance(answer.result, Solutions)
        value = answer.result.rows[0]["n"] if answer.result.rows else None
        total = max(0, (int(value.value) if isinstance(value, ox.Literal) else 0) - (offset or 0))
        return total if limit is None else min(total, limit)

    def _paged(self, text: str, dataset: Mapping[str, list[str]], form: str, max_rows: int | None,
               cut: int) -> QueryResult:
        """The whole answer to ``text``, page by page, checked against the server's count."""
        cap = self.capabilities.row_cap or cut
        parts = query_parts(text)
        if form not in ("SELECT", "CONSTRUCT") or parts.group is None:
            raise self._cut_error(cap, f"a {form} query cannot be fetched page by page")
        total = self._count(text, dataset, form)
        wanted = total if max_rows is None else min(total, max_rows + 1)
        if form == "SELECT":
            rows: list[dict[str, Term | None]] = []
            variables: list[str] = []
            while len(rows) < wanted:
                answer = self._request(paged(text, min(cap, wanted - len(rows)), len(rows)), dataset, form)
                assert isinstance(answer.result, Solutions)
                variables = variables or answer.result.variables
                if not answer.result.rows:
                    break
                rows += answer.result.rows
            if len(rows) != wanted:
                raise RemoteStoreError(
                    f"the endpoint at {self.location} gave {len(rows)} rows page by page where it "
                    f"counts {wanted}", url=self.location,
                    hint="The data changed while it was read, or the server does not order its "
                    "answers the same way twice; run the command again.")
            truncated = max_rows is not None and len(rows) > max_rows
            return Solutions(variables, rows[:max_rows] if truncated else rows, truncated=truncated)
        triples: dict[ox.Triple, None] = {}
        size, offset = cap, 0
        while offset < total:
            answer = self._request(paged(text, size, offset), dataset, form)
            if answer.length >= cap and size > 1:  # this page's solutions made too many triples
                size //= 2
                continue
            assert isinstance(answer.result, list)
            triples.update(dict.fromkeys(answer.result))
            offset += size
        return list(triples)

    def select_to_file(self, sparql: str, path: Path, *, fmt: str = "csv") -> None:
        """Stream the endpoint's own SPARQL results (csv, tsv, json, xml) into ``path``; where
        the server caps answers, page through them instead (see :meth:`query`)."""
        media = {"csv": "text/csv", "tsv": "text/tab-separated-values",
                 "json": "application/sparql-results+json", "xml": "application/sparql-results+xml"}
        if fmt not in media:
            raise ValueError(f"unknown results format {fmt!r}; use one of {', '.join(media)}")
        dataset = {} if names_dataset(sparql) else self._dataset()  # (the server is known after this)
        if self.capabilities.row_cap is not None or (fmt == "tsv" and self.capabilities.tsv_terms is False):
            super().select_to_file(sparql, path, fmt=fmt)
            return
        url = self.spec.query
        data = {"query": prefix_block(sparql) + sparql, **dataset}
        try:
            with self._client.stream("POST", url, data=data, headers={"Accept": media[fmt]}) as response:
                if response.status_code >= 300:
                    raise self._fail(response, "query", sparql)
                if _media_type(response) != media[fmt]:
                    raise RemoteStoreError(
                        f"the endpoint answered {_media_type(response) or 'no content type'}, not {media[fmt]}",
                        url=self.location, hint="Ask for another format, or use a SELECT query.",
                    )
                cap = response.headers.get("x-sparql-maxrows")
                if not cap:
                    with path.open("wb") as out:
                        for chunk in response.iter_bytes():
                            out.write(chunk)
                    return
                self.capabilities.row_cap = int(cap) if cap.isdigit() else None
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url, "query") from None
        super().select_to_file(sparql, path, fmt=fmt)  # the answer was cut: page through it

    # -- writes --------------------------------------------------------------------

    def update(self, sparql: str) -> None:
        try:
            self._post(
                self.spec.update, "update",
                content=(prefix_block(sparql) + sparql).encode("utf-8"),
                headers={"Content-Type": "application/sparql-update; charset=utf-8"},
            )
        finally:
            self._graph_list = None  # the write may have added or dropped graphs

    def commit_operations(self, operations: Sequence[str], graphs: Mapping[ox.NamedNode, int | None]) -> None:
        """One update request when it fits the server's limit and the server applies a
        request all or nothing; else staged (see :mod:`kg.store.staging`) and swapped in
        by one small request. Then every graph whose size the transaction knows is counted."""
        self._start()
        caps = self.capabilities
        if caps.server is None:
            self._raw_ask("ASK {}")  # the server's name tells its limits
        weight = sum(_weight(op) for op in operations)
        self._staged: dict[ox.NamedNode, ox.NamedNode] = {}
        if caps.atomic_updates is False and len(operations) > 1:
            self._commit_staged(operations, graphs, caps.update_triples or _STAGED_TRIPLES)
        elif caps.update_triples is None or weight <= caps.update_triples:
            try:
                super().commit_operations([staging.blank_safe(op) for op in operations], graphs)
            except RemoteStoreError as exc:
                if not (exc.status in (400, 413, 500) and _TOO_LARGE.search(str(exc))):
                    raise
                caps.update_triples = max(100, min(weight // 4, 1000))
                log.info("%s takes at most about %d triples per update; staging the transaction",
                         self.location, caps.update_triples)
                self._commit_staged(operations, graphs, caps.update_triples)
        else:
            self._commit_staged(operations, graphs, caps.update_triples)
        self._verify({g: n for g, n in graphs.items() if n is not None}, self._staged)

    def _commit_staged(self, operations: Sequence[str], graphs: Iterable[ox.NamedNode], limit: int) -> None:
        lease = _lease(self.spec.timeout)
        try:
            plan = staging.plan(operations, graphs, limit, lease)
        except ValueError as exc:
            raise StoreError(f"this transaction is too large for {self.location} and cannot be staged: {exc}",
                             hint="Write the graph names of raw updates as IRIs <...>.") from None
        renewed = time.monotonic()
        try:
            for step in plan.steps:
                self.update(step)
                if time.monotonic() - renewed > lease / 3:
                    self.update(" ;\n".join(staging.lease_update(s, lease) for s in plan.staging.values()))
                    renewed = time.monotonic()
            self._staged = dict(plan.staging)
            self.update(plan.swap)
        except BaseException:
            for graph in plan.staging.values():
                self._drop_quietly(graph)
            raise

    def _graph_count(self, graph: ox.NamedNode) -> int:
        rows = self._raw_select(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}").rows
        value = rows[0]["n"] if rows else None
        return int(value.value) if isinstance(value, ox.Literal) else 0

    def _verify(self, expected: Mapping[ox.NamedNode, int],
                staged: Mapping[ox.NamedNode, ox.NamedNode] | None = None) -> None:
        """Count what arrived: a server that reported success and holds less is an error. Where
        the graph was swapped in from a staging graph (``staged``) that still holds the triples,
        the server accepted ``MOVE SILENT`` and moved nothing: that is named as such."""
        for graph, count in expected.items():
            held = self._graph_count(graph)
            source = (staged or {}).get(graph)
            left = self._graph_count(source) if source is not None and held != count else 0
            if source is not None and left:
                raise RemoteStoreError(
                    f"the endpoint at {self.location} accepted MOVE SILENT {source.value} TO "
                    f"{graph.value} but moved nothing: {graph.value} holds {held} of the {count} triples "
                    f"written, and the staging graph still holds {left}",
                    url=self.location, hint="The server answers success to a SPARQL 1.1 MOVE that it does not "
                    "carry out, so running the command again fails the same way (its log may say why). The "
                    "graph it was to replace was dropped before the move; the data waits in the staging graph, "
                    "which the next command that writes on this server drops. Use a server that implements MOVE "
                    "(Oxigraph, Virtuoso 7), or restore the graph from a backup (kg restore).")
            if held != count:
                raise RemoteStoreError(
                    f"the endpoint at {self.location} reported success but holds {held} of the "
                    f"{count} triples written to {graph.value}",
                    url=self.location, hint="A limit on the server dropped part of the write (see its "
                    "log); run the command again, which writes the whole graph.")

    def load_file(
        self, path: Path, *, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool, activity: Activity,
        progress: Progress | None = None,
    ) -> int:
        """Upload ``path`` into ``graph``, replacing it, as the embedded store does: into a
        staging graph first (with the Graph Store Protocol, or in chunked ``INSERT DATA``
        requests), counted, then swapped in by one atomic update, so a failure at any
        point leaves the old graph as it was. Quad formats are flattened into ``graph``."""
        if fmt == ox.RdfFormat.RDF_XML:
            rdfxml.check(path, gzipped=gzipped)  # no entity bombs reach the parser
        self._start()
        target = staging.new_staging_graph()
        lease = _lease(self.spec.timeout)
        try:
            with _open(path, gzipped) as stream, tempfile.TemporaryFile() as spool:
                triples = _counted((ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(stream, format=fmt)),
                                   progress)
                found = self.capabilities.graph_store
                gsp = self.spec.gsp or (urljoin(self.spec.query, found) if found else None)
                if gsp:
                    sent = _spool_ntriples(triples, spool)  # parsed whole before anything is sent
                    self.update(staging.lease_update(target, lease))
                    if not self._gsp_post(target, spool, gsp, required=bool(self.spec.gsp)):
                        self.capabilities.graph_store = ""
                        spool.seek(0)
                        sent = self._insert_chunks(target, ox.parse(spool, format=ox.RdfFormat.N_TRIPLES), lease)
                else:
                    self.update(staging.lease_update(target, lease))
                    sent = self._insert_chunks(target, triples, lease)
            count = self._graph_count(target) - 1  # the lease
            if count != sent:
                raise RemoteStoreError(
                    f"the endpoint at {self.location} accepted {sent} triples and holds {count}",
                    url=self.location, hint="Nothing was changed in the store. A limit on the server "
                    "dropped part of the upload; see its log, or leave ;gsp= out to upload with "
                    "SPARQL updates instead.")
        except (SyntaxError, ValueError, OSError, EOFError) as exc:
            self._drop_quietly(target)
            raise RDFImportError(
                f"could not load it as {fmt.name}: {exc}",
                path=str(path),
                hint="Nothing was changed in the store. Fix the file, or pass --syntax if the "
                "file extension does not match its syntax.",
            ) from None
        except BaseException:
            self._drop_quietly(target)
            raise
        ops = [f"DELETE WHERE {{ GRAPH {target} {{ {target} {staging.LEASE} ?e }} }}",
               f"DROP SILENT GRAPH {graph}", f"MOVE SILENT {target} TO {graph}",
               provenance_update(activity, {graph: (_file_digest(path), count)}, activity.started)]
        try:
            self.update(" ;\n".join(ops))
        except BaseException:
            self._drop_quietly(target)
            raise
        activity.stats.setdefault("triples", count)  # after its record, as the embedded store does
        self._verify({graph: count}, {graph: target})
        return count

    def _gsp_post(self, target: ox.NamedNode, spool: IO[bytes], url: str, *, required: bool) -> bool:
        """POST the spooled N-Triples into ``target`` with the Graph Store Protocol, as one
        document with a Content-Length (a server may drop a chunked body). An Oxigraph
        server is asked for its bulk loader (``no_transaction``): the target is a staging
        graph, dropped on failure anyway. False where an endpoint the spec does not name
        (``required``) refuses or is not there: then uploads go in SPARQL updates."""
        size = spool.seek(0, io.SEEK_END)
        spool.seek(0)
        params = {"graph": target.value}
        if self.capabilities.server == "oxigraph":
            params["no_transaction"] = ""
        if self.capabilities.server == "virtuoso":
            params = {"graph-uri": target.value}
        try:
            response = self._client.post(
                url, params=params, content=spool,
                headers={"Content-Type": "application/n-triples", "Content-Length": str(size)},
            )
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url, "upload") from None
        if not required and response.status_code in (401, 403, 404, 405, 415):
            log.info("%s refused a Graph Store upload (%d); uploading with SPARQL updates",
                     redact(url), response.status_code)
            return False
        if response.status_code >= 300:
            raise self._fail(response, "upload")
        return True

    def _insert_chunks(self, target: ox.NamedNode, triples: Iterator[ox.Triple], lease: float) -> int:
        """INSERT DATA requests of at most the server's limit each; returns how many
        distinct triples were sent. A blank node is one node within one request only,
        so the triples that mention blank nodes are kept back and sent last, those that
        share one in the same request (:func:`kg.store.staging.chunks`)."""
        size = self.capabilities.update_triples or _CHUNK
        seen: set[int] = set()
        batch: list[ox.Triple] = []
        held: list[ox.Triple] = []
        renewed = time.monotonic()

        def send(chunk: list[ox.Triple]) -> None:
            nonlocal renewed
            body = "".join(f"{t.subject} {t.predicate} {t.object} .\n" for t in chunk)
            self.update(staging.blank_safe(f"INSERT DATA {{ GRAPH {target} {{\n{body}}} }}"))
            if time.monotonic() - renewed > lease / 3:
                self.update(staging.lease_update(target, lease))
                renewed = time.monotonic()

        for t in triples:
            seen.add(hash(t))
            if isinstance(t.subject, ox.BlankNode) or isinstance(t.object, ox.BlankNode):
                held.append(t)
                continue
            batch.append(t)
            if len(batch) >= size:
                send(batch)
                batch = []
        if batch:
            send(batch)
        for chunk in staging.chunks(held, size):
            send(chunk)
        return len(seen)

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

    # -- dumps -----------------------------------------------------------------------

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
        """One graph's triples, spooled to disk so a large graph never sits in memory
        twice, and page by page where the server caps an answer (each page is counted
        before it is given out, and the pages against the graph's size)."""
        query = f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}"
        total = self._graph_count(graph)
        offset = 0
        while offset < total:
            cap = self.capabilities.row_cap
            size = total - offset if cap is None else min(cap, total - offset)
            with tempfile.SpooledTemporaryFile(max_size=64 << 20) as spool:
                fmt = self._spool(query if cap is None else paged(query, size, offset), spool)
                spool.seek(0)
                got = sum(1 for _ in rdfxml.parse(spool, fmt, source=self.location))
                if got < size:
                    if cap is not None or got == 0:
                        raise RemoteStoreError(
                            f"the endpoint at {self.location} gave {offset + got} of the {total} triples "
                            f"of {graph.value}", url=self.location,
                            hint="The graph changed while it was read, or the server cut the answer; "
                            "run the command again.")
                    self.capabilities.row_cap = got  # cut at a cap it did not announce: page by it
                    continue
                spool.seek(0)
                for q in rdfxml.parse(spool, fmt, source=self.location):
                    yield ox.Triple(q.subject, q.predicate, q.object)
            offset += got

    def _spool(self, text: str, spool: IO[bytes]) -> ox.RdfFormat:
        """POST a CONSTRUCT query and write the answer into ``spool``; returns its format."""
        url = self.spec.query
        try:
            with self._client.stream("POST", url, data={"query": text},
                                     headers={"Accept": _ACCEPT["CONSTRUCT"]}) as response:
                if response.status_code >= 300:
                    raise self._fail(response, "query", text)
                for chunk in response.iter_bytes():
                    spool.write(chunk)
                return _GRAPH_TYPES.get(_media_type(response), ox.RdfFormat.N_TRIPLES)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url, "query") from None

    def close(self) -> None:
        self._client.close()
