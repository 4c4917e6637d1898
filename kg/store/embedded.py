"""The embedded default: an Oxigraph store in a directory on disk (pyoxigraph)."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

import pyoxigraph as ox

from kg.errors import QueryError, RDFImportError, StoreError, StoreLockedError
from kg.paging import SortKey
from kg.results import QueryResult, Solutions, Term
from kg.sparqltext import inject_values
from kg.store.base import Activity, GraphStore, SolutionStream, prefix_block, provenance_update
from kg.vocab import PREFIXES

__all__ = ["OxigraphStore", "SERVE_FILE"]

#: ``kg serve`` writes its URL here so that a locked store can point to it.
SERVE_FILE = "serve.json"
_STAGING = "urn:techkg:staging:"


class OxigraphStore(GraphStore):
    """Oxigraph on disk, or in memory when ``path`` is None.

    One process at a time may hold a store on disk. Another process gets a
    :class:`StoreLockedError` that says who holds it and how to reach it instead.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.location = str(path) if path else ":memory:"
        try:
            if path is None:
                self._store = ox.Store()
            else:
                path.mkdir(parents=True, exist_ok=True)
                self._store = ox.Store(str(path))
        except OSError as exc:
            if "lock" in str(exc).lower() and path is not None:
                raise StoreLockedError(
                    f"the store at {path} is in use by another process",
                    hint=_lock_hint(path),
                ) from None
            raise StoreError(
                f"cannot open the store at {path}: {exc}",
                hint="Check that the directory is readable and holds an Oxigraph store, "
                "or point --store / KG_STORE at another directory.",
            ) from exc
        self._drop_staging()
        if path is not None:
            from kg.store.bulk import resume

            resume(self._store, path, self.update)

    # -- primitives ----------------------------------------------------------------

    def _query(
        self, sparql: str, bindings: Mapping[str, Term] | None, max_rows: int | None
    ) -> QueryResult:
        substitutions = {ox.Variable(k): v for k, v in (bindings or {}).items()}
        try:
            # GraphStore.query binds variables with VALUES blocks; substitutions remain
            # for callers of _query that pass bindings directly.
            result = self._store.query(
                sparql,
                use_default_graph_as_union=True,
                prefixes=PREFIXES,
                substitutions=substitutions or None,
            )
            if isinstance(result, ox.QuerySolutions):
                return Solutions.from_pyoxigraph(result, max_rows)
            if isinstance(result, ox.QueryBoolean):
                return bool(result)
            return list(result)
        except SyntaxError as exc:
            raise QueryError(
                f"the SPARQL query is malformed: {exc}",
                hint="Check the query against the SPARQL 1.1 grammar; prefixes such as tkg:, "
                "skos:, prov: and dcterms: are predeclared.",
            ) from None
        except RuntimeError as exc:
            raise QueryError(f"the query failed: {exc}") from None
        except OSError as exc:
            raise StoreError(f"reading the store at {self.location} failed: {exc}") from exc

    def stream(self, sparql: str, bindings: Mapping[str, Term | Sequence[Term]] | None = None) -> SolutionStream:
        """Solutions straight from Oxigraph's lazy iterator: nothing is held but the row at hand
        (a query with ORDER BY or GROUP BY still gathers its rows inside the store)."""
        if bindings:
            sparql = inject_values(sparql, bindings)
        result = self._run(sparql)
        if not isinstance(result, ox.QuerySolutions):
            raise QueryError("expected a SELECT query", hint="Use kg sparql for ASK/CONSTRUCT queries.")
        variables = [v.value for v in result.variables]
        return SolutionStream(variables, self._rows(result))

    def page(self, sparql: str, key: Sequence[SortKey], limit: int | None,
             after: Sequence[Term | None] | None) -> SolutionStream:
        """A page picked in Python from the query's rows, unordered: Oxigraph's ORDER BY reads
        every IRI and long string back from disk at each comparison (about 40 s to sort
        100,000 paper IRIs), while each row's terms are read once here."""
        from kg.paging import select_page, without_order

        stream = self.stream(without_order(sparql))
        return SolutionStream(stream.variables, select_page(stream.variables, stream.rows, key, limit, after))

    def _rows(self, result: ox.QuerySolutions) -> Iterator[tuple[Term | None, ...]]:
        try:
            for solution in result:
                yield tuple(solution)
        except RuntimeError as exc:
            raise QueryError(f"the query failed: {exc}") from None
        except OSError as exc:
            raise StoreError(f"reading the store at {self.location} failed: {exc}") from exc

    def _run(self, sparql: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        try:
            return self._store.query(sparql, use_default_graph_as_union=True, prefixes=PREFIXES)
        except SyntaxError as exc:
            raise QueryError(
                f"the SPARQL query is malformed: {exc}",
                hint="Check the query against the SPARQL 1.1 grammar; prefixes such as tkg:, "
                "skos:, prov: and dcterms: are predeclared.",
            ) from None
        except RuntimeError as exc:
            raise QueryError(f"the query failed: {exc}") from None
        except OSError as exc:
            raise StoreError(f"reading the store at {self.location} failed: {exc}") from exc

    def select_to_file(self, sparql: str, path: Path, *, fmt: str = "csv") -> None:
        """Stream the solutions from Oxigraph straight into ``path``, without Python rows."""
        formats = {"csv": ox.QueryResultsFormat.CSV, "tsv": ox.QueryResultsFormat.TSV,
                   "json": ox.QueryResultsFormat.JSON, "xml": ox.QueryResultsFormat.XML}
        if fmt not in formats:
            raise ValueError(f"unknown results format {fmt!r}; use one of {', '.join(formats)}")
        try:
            result = self._store.query(sparql, use_default_graph_as_union=True, prefixes=PREFIXES)
            if not isinstance(result, ox.QuerySolutions):
                raise QueryError("expected a SELECT query")
            result.serialize(str(path), formats[fmt])
        except SyntaxError as exc:
            raise QueryError(f"the SPARQL query is malformed: {exc}") from None
        except RuntimeError as exc:
            raise QueryError(f"the query failed: {exc}") from None
        except OSError as exc:
            raise StoreError(f"writing the results of a query on {self.location} to {path} failed: {exc}") from exc

    def update(self, sparql: str) -> None:
        try:
            self._store.update(sparql, prefixes=PREFIXES)
        except SyntaxError as exc:
            raise QueryError(f"the SPARQL update is malformed: {exc}") from None
        except (OSError, RuntimeError) as exc:
            raise StoreError(
                f"the update was rejected and nothing was written: {exc}",
                hint="The store is unchanged; fix the cause above and run the command again.",
            ) from exc

    def load_file(
        self, path: Path, *, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool, activity: Activity
    ) -> int:
        """Bulk-load ``path`` into ``graph``, replacing it (see :mod:`kg.store.bulk`).

        An empty target graph gets the file straight from Oxigraph's bulk loader (given
        the path, for an uncompressed file), while a thread works out the digest and the
        triple count; a failure removes what was loaded. A graph that holds data is
        replaced by the difference only, journalled first, so that a failure or a kill
        leaves the old graph or (completed at the next open) the new one."""

        quads_format = fmt in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG)
        try:
            if not quads_format and self._is_empty(graph):
                count, digest = self._first_load(path, graph, fmt, gzipped)
                self.update(provenance_update(activity, {graph: (digest, count)}, activity.started))
            else:
                count = self._replace(path, graph, fmt, gzipped, activity)
        except (SyntaxError, ValueError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
            raise RDFImportError(
                f"could not load it as {fmt.name}: {exc}",
                path=str(path),
                hint="Nothing was changed in the store. Fix the file, or pass --format if the "
                "file extension does not match its syntax.",
            ) from None
        except OSError as exc:
            raise RDFImportError(f"could not load it: {exc}", path=str(path),
                                 hint="Nothing was changed in the store. Check the file and the disk.") from None
        activity.stats.setdefault("triples", count)
        return count

    def _first_load(self, path: Path, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool) -> tuple[int, str]:
        from kg.store import bulk

        facts = bulk.FileFacts(path, fmt, gzipped)
        facts.start()
        try:
            if gzipped:
                with bulk.open_rdf(path, gzipped) as stream:
                    self._store.bulk_load(stream, format=fmt, to_graph=graph)
            else:
                self._store.bulk_load(path=str(path), format=fmt, to_graph=graph)
            digest, count = facts.result()
        except BaseException:
            facts.join()
            self._clear(graph)
            raise
        return count, digest

    def _replace(self, path: Path, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool, activity: Activity) -> int:
        from kg.store import bulk

        folder = bulk.work_folder(self.path)
        try:
            change = bulk.diff(self._store, graph, path, fmt, gzipped, folder)
            activity.stats.setdefault("added", change.added)
            activity.stats.setdefault("removed", change.removed)
            provenance = prefix_block("") + provenance_update(
                activity, {graph: (change.digest, change.triples)}, activity.started)
            bulk.write_journal(change, provenance)
        except BaseException:
            bulk.discard(folder)
            raise
        # From here the replacement completes: now, or at the next open if this process dies.
        bulk.apply(self._store, folder, self.update)
        return change.triples

    def _clear(self, graph: ox.NamedNode) -> None:
        """Empty ``graph`` a batch at a time (one transaction for all would hold it all in memory)."""
        while not self._is_empty(graph):
            self._store.update(f"DELETE {{ GRAPH {graph} {{ ?s ?p ?o }} }} WHERE {{ SELECT ?s ?p ?o WHERE "
                               f"{{ GRAPH {graph} {{ ?s ?p ?o }} }} LIMIT 20000 }}")

    def dump(self, out: IO[bytes], *, fmt: ox.RdfFormat, graph: ox.NamedNode | None = None) -> None:
        if graph is None and fmt not in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG):
            triples = self.triples()
            out.write(ox.serialize(triples, format=fmt) or b"")
            return
        if graph is None:
            self._store.dump(out, format=fmt)
        else:
            self._store.dump(out, format=fmt, from_graph=graph)

    def named_graphs(self) -> list[ox.NamedNode]:
        return sorted(
            (g for g in self._store.named_graphs() if isinstance(g, ox.NamedNode) and not self._is_empty(g)),
            key=lambda g: g.value,
        )

    def close(self) -> None:
        if getattr(self, "_store", None) is not None:
            self._store.flush()
            del self._store
            self._store = None  # type: ignore[assignment]

    # -- helpers -------------------------------------------------------------------

    def _is_empty(self, graph: ox.NamedNode) -> bool:
        return next(iter(self._store.quads_for_pattern(None, None, None, graph)), None) is None

    def _drop_staging(self) -> None:
        for g in list(self._store.named_graphs()):
            if isinstance(g, ox.NamedNode) and g.value.startswith(_STAGING):
                self._store.remove_graph(g)


def _open(path: Path, gzipped: bool) -> IO[bytes]:
    from kg.store.bulk import open_rdf

    return open_rdf(path, gzipped)


def _file_digest(path: Path) -> str:
    """``file:`` and the SHA-256 of the file's bytes (the remote store's import provenance)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return "file:" + digest.hexdigest()


def _lock_hint(path: Path) -> str:
    serve = path / SERVE_FILE
    if serve.exists():
        try:
            info = json.loads(serve.read_text())
            url = info["sparql"]
            return (
                f"`kg serve` (pid {info.get('pid', '?')}) holds it. Run the command against its "
                f"endpoint instead: kg --store {url} ..., or stop the server first."
            )
        except (OSError, ValueError, KeyError):
            pass
    return (
        "Wait for the other kg command to finish, stop the `kg serve` that holds it, or use "
        "another store with --store DIR (or KG_STORE)."
    )
