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
  (:mod:`kg.sparqlrewrite`). Either way the answers are the same.
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
import re
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO
from urllib.parse import urljoin

import httpx
import pyoxigraph as ox

from kg import rdfxml
from kg.errors import KGError, RemoteStoreError, StoreError
from kg.graphs import PROVENANCE
from kg.sparqltext import paged
from kg.store import staging
from kg.store.base import Activity, Progress, prefix_block, unparsable
from kg.store.embedded import _file_digest, _open
from kg.store.endpoint import ACCEPT, GRAPH_TYPES, media_type, parse_spec, redact
from kg.store.provenance import provenance_update
from kg.store.remote_read import RemoteReads

__all__ = ["RemoteStore"]

log = logging.getLogger("kg.store")

#: Triples per INSERT DATA request of an upload without the Graph Store Protocol, where
#: the server names no limit of its own.
_CHUNK = 20_000
#: What a server says when an update is too large for it (Virtuoso: SP031 ... exceeded).
_TOO_LARGE = re.compile(r"(?i)SP031.*exceeded|too large|too long|request entity|payload|more than the limit")


def _too_large(exc: RemoteStoreError) -> bool:
    """Whether the server refused a request for its size (kg serve: 413, "more than the limit")."""
    return exc.status == 413 or (exc.status in (400, 500) and _TOO_LARGE.search(str(exc)) is not None)


#: Data triples per request when a transaction is staged for atomicity alone.
_STAGED_TRIPLES = 5000


def _lease(timeout: float) -> float:
    """Seconds a staging graph's lease lasts: renewed every third of it while a write runs,
    it outlives the longest request (``timeout``) between renewals."""
    return 2 * timeout + 10


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



class RemoteStore(RemoteReads):
    """A SPARQL 1.1 Protocol endpoint (plus, optionally, a Graph Store Protocol one); the
    reads are :class:`~kg.store.remote_read.RemoteReads`'."""

    @classmethod
    def from_spec(cls, value: str) -> RemoteStore:
        """The store named by a ``--store`` / ``KG_STORE`` value (see the module docs)."""
        return cls(parse_spec(value))

    # -- HTTP ----------------------------------------------------------------------

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
                if not _too_large(exc):
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
            with _open(path, gzipped, fmt) as stream, tempfile.TemporaryFile() as spool:
                # Every statement folded into ``graph``, a quad format's provenance left out (as kg.store.bulk does).
                triples = _counted((ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(stream, format=fmt)
                                    if q.graph_name != PROVENANCE), progress)
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
        except MemoryError as exc:  # pyoxigraph's limit on one token (kg.inputlimits)
            self._drop_quietly(target)
            from kg.inputlimits import parser_gave_up

            raise parser_gave_up(path, exc) from None
        except (SyntaxError, ValueError, OSError, EOFError) as exc:
            self._drop_quietly(target)
            raise unparsable(path, fmt, exc) from None
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
            nonlocal renewed, size
            body = "".join(f"{t.subject} {t.predicate} {t.object} .\n" for t in chunk)
            try:
                self.update(staging.blank_safe(f"INSERT DATA {{ GRAPH {target} {{\n{body}}} }}"))
            except RemoteStoreError as exc:  # over the server's size limit (kg serve: 256 KiB): halve and go on
                halves = list(staging.chunks(chunk, max(1, len(chunk) // 2)))
                if not _too_large(exc) or len(halves) < 2:
                    raise
                size = self.capabilities.update_triples = max(1, len(chunk) // 2)
                log.info("%s takes fewer triples per update; sending %d at a time", self.location, size)
                for half in halves:
                    send(half)
                return
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
                                     headers={"Accept": ACCEPT["CONSTRUCT"]}) as response:
                if response.status_code >= 300:
                    raise self._fail(response, "query", text)
                for chunk in response.iter_bytes():
                    spool.write(chunk)
                return GRAPH_TYPES.get(media_type(response), ox.RdfFormat.N_TRIPLES)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url, "query") from None

    def close(self) -> None:
        self._client.close()
