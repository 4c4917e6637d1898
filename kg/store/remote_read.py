"""Reading a remote SPARQL endpoint (:class:`RemoteReads`, the reading half of
:class:`kg.store.remote.RemoteStore`): requests and their errors, the graphs TechKG
owns there, what the server can do (capabilities), and answers made whole where the
server cuts them at a row cap.
"""

from __future__ import annotations

import io
import logging
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pyoxigraph as ox

from kg import rdfxml
from kg.errors import KGError, QueryError, RemoteStoreError
from kg.graphs import PROVENANCE, is_own_graph
from kg.redirects import SafeClient
from kg.results import QueryResult, Solutions, Term, canonical_term
from kg.sparqlerrors import predeclared, syntax_error, undeclared_prefixes
from kg.sparqlguard import names_dataset
from kg.sparqlrewrite import (
    binds_after_optionals,
    order_outside,
    same_term_as_equality,
    values_after_unions,
    values_as_constants,
    values_as_filters,
)
from kg.sparqltext import inject_values, paged, query_form, query_parts, unsliced
from kg.store import staging
from kg.store.base import Dataset, GraphStore, prefix_block
from kg.store.capabilities import (
    GRAPHS_BY_NAME,
    GRAPHS_OF_TRIPLES,
    ORDER_BY_ALIAS_PROBE,
    SAME_TERM_PROBE,
    VALUES_PATH_PROBE,
    Capabilities,
    row_probe,
)
from kg.store.endpoint import (
    ACCEPT,
    ENDPOINT_HINT,
    GRAPH_TYPES,
    RESULT_TYPES,
    EndpointSpec,
    ResponseReader,
    media_type,
    page_title,
    redact,
)
from kg.version import __version__
from kg.vocab import PROV

__all__ = ["NO_GRAPH", "RemoteReads"]

log = logging.getLogger("kg.store")

#: Stands in for "no graph at all" when the store holds no named graph yet.
NO_GRAPH = "urn:techkg:no-graph"
#: Seconds the list of named graphs is reused (our own writes reset it; others' show after this).
_GRAPH_LIST_TTL = 10.0
#: Answers shorter than this are never suspected of having been cut at a row cap.
_CAP_FLOOR = 1000
#: What a server says when it refuses an update for want of a permission.
_PERMISSION = re.compile(r"(?i)SR186|SECURITY:|no permission|permission denied|access denied|not authori[sz]ed|"
                         r"forbidden|read-?only")
#: Virtuoso's refusal of a query on its cost estimate (MaxQueryCostEstimationTime).
_ESTIMATE = re.compile(r"estimated execution time (\d+) \(sec\) exceeds the limit of (\d+)")
#: A VALUES block, as kg.sparqltext.inject_values writes them.
_HAS_VALUES = re.compile(r"(?i)\bVALUES\s*\(")
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



@dataclass
class _Answer:
    """One answer from the endpoint: the result, its length, and whether the server said
    that it cut it at its row cap."""

    result: QueryResult
    length: int
    capped: bool


class RemoteReads(GraphStore):
    """The reading half of a remote store: everything but the writes, which
    :class:`kg.store.remote.RemoteStore` adds."""

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
        # A redirect that leaves the endpoint's origin does not take the token along.
        self._client = client or SafeClient(
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

    def _fail(self, response: httpx.Response, what: str, sparql: str | None = None) -> KGError:
        status = response.status_code
        url = redact(str(response.request.url).split("?")[0])
        try:
            raw = response.read().decode("utf-8", "replace").strip()
        except httpx.HTTPError:
            raw = ""
        html = media_type(response) in ("text/html", "application/xhtml+xml")
        body = (page_title(raw) if html else re.sub(r"\s+", " ", raw)[:500]) or response.reason_phrase
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
                                    status=status, hint=ENDPOINT_HINT)
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
            + ENDPOINT_HINT + " Without --store / KG_STORE, TechKG uses its embedded store.",
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
                "POST", url, data={"query": text, **dataset}, headers={"Accept": ACCEPT[form]}
            ) as response:
                self.capabilities.saw_server(response.headers.get("server", ""))
                if response.status_code >= 300:
                    raise self._fail(response, "query", text)
                cap = response.headers.get("x-sparql-maxrows")
                if cap and cap.isdigit():
                    self.capabilities.row_cap = int(cap)
                media = media_type(response)
                reader = io.BufferedReader(ResponseReader(response))
                if media in RESULT_TYPES:
                    parsed = ox.parse_query_results(reader, RESULT_TYPES[media])
                    if isinstance(parsed, ox.QueryBoolean):
                        return _Answer(bool(parsed), 1, False)
                    solutions = Solutions.from_pyoxigraph(parsed, max_rows, canonical=True)  # Virtuoso's 1/0
                    return _Answer(solutions, len(solutions), bool(cap) and not solutions.truncated)
                if media in GRAPH_TYPES:
                    triples = [ox.Triple(q.subject, q.predicate, canonical_term(q.object))  # type: ignore[arg-type]
                               for q in rdfxml.parse(reader, GRAPH_TYPES[media], source=self.location)]
                    return _Answer(triples, len(triples), bool(cap))
                if media in ("text/html", "application/xhtml+xml"):
                    page = page_title(response.read().decode("utf-8", "replace"))
                    raise RemoteStoreError(
                        f"the endpoint at {self.location} answered with an HTML page ({page!r}), "
                        "not SPARQL results",
                        url=self.location, status=response.status_code,
                        hint="That URL serves a web page, not the SPARQL protocol. " + ENDPOINT_HINT)
                raise RemoteStoreError(
                    f"the endpoint at {self.location} answered with {media or 'no content type'}, "
                    "not SPARQL results",
                    url=self.location, status=response.status_code, hint=ENDPOINT_HINT,
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
        """Every non-empty named graph on the server, the server's own included (asked now):
        by the graphs' names where the server lists them so, else from their triples (every
        command on a remote store asks this once: 3.6 s at 700k papers on Oxigraph, against
        0.01 s by name). A server that finds no graph by name is asked from the triples, and
        is asked so from then on where that finds some."""
        caps = self.capabilities
        if caps.graphs_by_name is not False:
            rows = self._probe(GRAPHS_BY_NAME)
            named = [g for g in rows.values("g") if isinstance(g, ox.NamedNode)] if rows is not None else []
            if named:
                caps.graphs_by_name = True
                return named
        every = [g for g in self._raw_select(GRAPHS_OF_TRIPLES).values("g") if isinstance(g, ox.NamedNode)]
        if every and caps.graphs_by_name is None:
            caps.graphs_by_name = False
        return every

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
        graphs = [g.value for g in self._listing()[1]] or [NO_GRAPH]
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
        params = {"default-graph-uri": [g.value for g in dataset.default] or [NO_GRAPH],
                  "named-graph-uri": [g.value for g in dataset.named] or [NO_GRAPH]}
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
                if media_type(response) != media[fmt]:
                    raise RemoteStoreError(
                        f"the endpoint answered {media_type(response) or 'no content type'}, not {media[fmt]}",
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

    def _graph_count(self, graph: ox.NamedNode) -> int:
        rows = self._raw_select(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}").rows
        value = rows[0]["n"] if rows else None
        return int(value.value) if isinstance(value, ox.Literal) else 0
