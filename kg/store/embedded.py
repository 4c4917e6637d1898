"""The embedded default: an Oxigraph store in a directory on disk (pyoxigraph)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, cast

import pyoxigraph as ox

from kg.errors import QueryError, RDFImportError, StoreError, StoreLockedError
from kg.rdfxml import check as check_rdfxml
from kg.results import QueryResult, Solutions, Term
from kg.sparqlguard import names_dataset
from kg.store.base import Activity, Dataset, GraphStore, provenance_update
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

    #: Opened with :meth:`read_only`: nothing to flush.
    _read_only = False

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

    @classmethod
    def read_only(cls, path: Path) -> OxigraphStore:
        """A store opened read-only: no lock, no writes. Meant for a directory no process
        writes to, such as a :meth:`snapshot` (pyoxigraph does not define what a
        read-only reader sees while another process writes)."""
        self = cls.__new__(cls)
        self.path = path
        self.location = str(path)
        self._read_only = True
        try:
            self._store = ox.Store.read_only(str(path))
        except OSError as exc:
            raise StoreError(f"cannot open the store at {path} read-only: {exc}") from exc
        return self

    def snapshot(self, target: Path) -> None:
        """Write a consistent copy of the whole store to the new directory ``target``,
        for :meth:`read_only` readers: a RocksDB checkpoint (hard links, milliseconds)
        of a store on disk, a bulk copy of one in memory."""
        try:
            if self.path is not None:
                self._store.backup(str(target))
                return
            copy = ox.Store(str(target))
            copy.bulk_extend(self._store.quads_for_pattern(None, None, None, None))
            copy.flush()
            del copy
        except OSError as exc:
            raise StoreError(f"cannot write a snapshot of the store at {self.location} to {target}: {exc}") from exc

    # -- primitives ----------------------------------------------------------------

    def _query(
        self, sparql: str, bindings: Mapping[str, Term] | None, max_rows: int | None
    ) -> QueryResult:
        substitutions = {ox.Variable(k): v for k, v in (bindings or {}).items()}
        # GraphStore.query binds variables with VALUES blocks; substitutions remain for
        # callers of _query that pass bindings directly. The union is the default graph
        # only when the query names no dataset (FROM / FROM NAMED) of its own.
        return self._run(sparql, max_rows, use_default_graph_as_union=not names_dataset(sparql),
                         substitutions=substitutions or None)

    def _query_dataset(self, sparql: str, dataset: Dataset, max_rows: int | None) -> QueryResult:
        return self._run(sparql, max_rows, default_graph=list(dataset.default), named_graphs=list(dataset.named))

    def _run(self, sparql: str, max_rows: int | None, **options: Any) -> QueryResult:
        try:
            result = self._store.query(sparql, prefixes=PREFIXES, **options)
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

    def select_to_file(self, sparql: str, path: Path, *, fmt: str = "csv") -> None:
        """Stream the solutions from Oxigraph straight into ``path``, without Python rows."""
        formats = {"csv": ox.QueryResultsFormat.CSV, "tsv": ox.QueryResultsFormat.TSV,
                   "json": ox.QueryResultsFormat.JSON, "xml": ox.QueryResultsFormat.XML}
        if fmt not in formats:
            raise ValueError(f"unknown results format {fmt!r}; use one of {', '.join(formats)}")
        try:
            result = self._store.query(sparql, use_default_graph_as_union=not names_dataset(sparql),
                                       prefixes=PREFIXES)
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
        """Bulk-load ``path`` into ``graph`` through Oxigraph's bulk loader.

        An empty target graph is loaded directly; a failure removes what was loaded.
        A non-empty one is loaded into a staging graph first and swapped in by a single
        atomic update, so a failure at any point leaves the old graph as it was.
        """
        if fmt == ox.RdfFormat.RDF_XML:
            check_rdfxml(path, gzipped=gzipped)  # no entity bombs reach the parser
        quads_format = fmt in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG)
        direct = not quads_format and self._is_empty(graph)
        target = graph if direct else ox.NamedNode(_STAGING + uuid.uuid4().hex)
        try:
            with _open(path, gzipped) as stream:
                if quads_format:
                    # Quad formats name their own graphs; everything goes into `target`.
                    self._store.bulk_extend(
                        ox.Quad(q.subject, q.predicate, q.object, target)
                        for q in ox.parse(stream, format=fmt)
                    )
                else:
                    self._store.bulk_load(stream, format=fmt, to_graph=target)
        except (SyntaxError, ValueError, OSError, EOFError, gzip.BadGzipFile) as exc:
            if self._store.contains_named_graph(target):
                self._store.remove_graph(target)
            raise RDFImportError(
                f"could not load it as {fmt.name}: {exc}",
                path=str(path),
                hint="Nothing was changed in the store. Fix the file, or pass --format if the "
                "file extension does not match its syntax.",
            ) from None
        count = self.count(target)
        activity.stats.setdefault("triples", count)
        ops = []
        if not direct:
            ops.append(f"DROP SILENT GRAPH {graph}")
            if count:
                ops.append(f"MOVE SILENT {target} TO {graph}")
        digest = _file_digest(path)
        ops.append(provenance_update(activity, {graph: (digest, count)}, activity.started))
        try:
            self.update(" ;\n".join(ops))
        except StoreError:
            if not direct:
                self._store.remove_graph(target)
            raise
        return count

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
            if not self._read_only:
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
    return cast(IO[bytes], gzip.open(path, "rb")) if gzipped else path.open("rb")


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return "file:" + digest.hexdigest()


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _lock_hint(path: Path) -> str:
    serve = path / SERVE_FILE
    if serve.exists():
        try:
            info = json.loads(serve.read_text())
            url, pid = info["sparql"], int(info["pid"])
            if _alive(pid):
                return (
                    f"`kg serve` (pid {pid}) holds it. Run the command against its "
                    f"endpoint instead: kg --store {url} ..., or stop the server first."
                )
            # A server that was killed left its serve.json behind: it names nobody.
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return (
        "Wait for the other kg command to finish, stop the `kg serve` that holds it, or use "
        "another store with --store DIR (or KG_STORE)."
    )
