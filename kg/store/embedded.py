"""The embedded default: an Oxigraph store in a directory on disk (pyoxigraph).

A store opens as a *writer* (``OxigraphStore(path)``: one process at a time, others wait
up to ``wait`` seconds and are then told who holds it) or as a *reader*
(:meth:`OxigraphStore.open_reader`: any number, at any time, over the newest published
view; see :mod:`kg.store.folder` for why views and not ``Store.read_only`` on the primary).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar, cast

import pyoxigraph as ox

from kg.derived import Changes, Delta, record
from kg.errors import KGError, QueryError, RDFImportError, StoreError, StoreLockedError
from kg.graphs import PROVENANCE
from kg.pauses import pause_point
from kg.rdfxml import check as check_rdfxml
from kg.results import QueryResult, Solutions, Term, ordered_cells
from kg.sparqlerrors import syntax_error
from kg.sparqlguard import names_dataset
from kg.sparqltext import inject_values
from kg.store.base import (
    Activity,
    Dataset,
    GraphStore,
    Operation,
    Progress,
    SolutionStream,
    prefix_block,
    unparsable,
)
from kg.store.copies import Copies, ImportCopy
from kg.store.folder import SERVE_FILE, ReaderLease, StoreFolder, WriterLock
from kg.store.provenance import provenance_update
from kg.vocab import PREFIXES

__all__ = ["OxigraphStore", "SERVE_FILE", "Notice"]

_STAGING = "urn:techkg:staging:"
#: Receives one-line messages about waiting and recovery (the CLI prints them to stderr).
Notice = Callable[[str], None]


def _quiet(_message: str) -> None:
    return None


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _one_write_at_a_time(method: _Method) -> _Method:
    """Run a write method of :class:`OxigraphStore` under its ``_writing`` lock."""

    @functools.wraps(method)
    def serialized(self: OxigraphStore, *args: Any, **kwargs: Any) -> Any:
        with self._writing:
            return method(self, *args, **kwargs)

    return cast(_Method, serialized)


def _ordered_rows(rows: Iterator[tuple[Term | None, ...]], variables: list[str],
                  order: Callable[[dict[str, Term | None]], dict[str, Term | None]],
                  ) -> Iterator[tuple[Term | None, ...]]:
    for row in rows:
        ordered = order(dict(zip(variables, row, strict=True)))
        yield tuple(ordered[v] for v in variables)


class OxigraphStore(GraphStore):
    """Oxigraph on disk, or in memory when ``path`` is None.

    ``OxigraphStore(path)`` opens the store as its one writer: another writer waits up to
    ``wait`` seconds, then gets a :class:`StoreLockedError` that names the holder's command
    and pid. ``command`` is what this process says it is doing (``kg import rdf``).
    Opening after a writer was killed recovers first and says what it recovers through
    ``notice``. Readers use :meth:`open_reader` and are never blocked.
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        wait: float = 0.0,
        command: str = "kg",
        create_parents: bool = False,
        notice: Notice | None = None,
    ) -> None:
        self.path = path
        self.location = str(path) if path else ":memory:"
        self.read_only = False
        self._notice = notice or _quiet
        self._lock: WriterLock | None = None
        self._lease: ReaderLease | None = None
        #: One write at a time within this process (``kg serve`` writes from several
        #: threads): a commit and the view it publishes go together, views are published
        #: in the order of the commits, and no view shows another thread's staging graphs.
        self._writing = threading.RLock()
        self._folder = StoreFolder(path) if path is not None else None
        self._copies = Copies(path) if path is not None else None
        if path is None:
            self._store = ox.Store()
            return
        assert self._folder is not None
        self._folder.prepare(create_parents=create_parents)
        self._lock = self._folder.lock(command=command, wait=wait, on_wait=self._notice)
        try:
            self._store = ox.Store(str(path))
        except OSError as exc:
            self._lock.release()
            if "lock" in str(exc).lower():
                raise StoreLockedError(
                    f"the store at {path} is in use by another process",
                    hint=self._folder.locked_hint(),
                ) from None
            raise StoreError(
                f"cannot open the store at {path}: {exc}",
                hint="Check that the directory is readable and holds an Oxigraph store, "
                "or point --store / KG_STORE at another directory.",
            ) from exc
        self._folder.prune_info_logs()
        try:
            self._recover()
        except BaseException:
            self.close()
            raise

    @classmethod
    def _read_only(cls, path: Path, notice: Notice, folder: StoreFolder | None, copies: Copies | None
                   ) -> OxigraphStore:
        """A read-only store at ``path`` that holds no lock and writes nothing (its view not opened yet)."""
        self = cls.__new__(cls)
        self.path = path
        self.location = str(path)
        self.read_only = True
        self._notice = notice
        self._lock = None
        self._writing = threading.RLock()
        self._folder = folder
        self._copies = copies
        self._lease = None
        return self

    @classmethod
    def open_reader(cls, path: Path, *, create_parents: bool = False, notice: Notice | None = None) -> OxigraphStore:
        """A read-only store over the newest published view of the store at ``path``.

        Never waits for a writer. Writes through it raise :class:`StoreError`. A long-lived
        reader calls :meth:`refresh` to move to a newer view."""
        folder = StoreFolder(path)
        folder.refuse_nested()
        say = notice or _quiet
        if not folder.is_store() or folder.views_stale():
            _publish_if_free(path, folder, create_parents=create_parents, notice=say)
        self = cls._read_only(path, say, folder, Copies(path))
        self._open_view()
        return self

    @classmethod
    def open_snapshot(cls, path: Path) -> OxigraphStore:
        """A read-only store over a directory that no process writes: a :meth:`snapshot`."""
        # A snapshot holds RocksDB's files alone (see kg.store.copies).
        self = cls._read_only(path, _quiet, None, None)
        self._store = _open_read_only(path)
        return self

    def snapshot(self, target: Path) -> None:
        """Write a consistent copy of the whole store into the new directory ``target``,
        for :meth:`open_snapshot`: a RocksDB checkpoint (hard links) of a store on disk, a
        bulk copy of one in memory."""
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

    def _open_view(self) -> None:
        assert self._folder is not None and self.path is not None
        lease = self._folder.lease_view()
        if lease is None:
            # No view yet and a writer holds the store: only a store last written by a
            # TechKG older than views gets here. Read the primary directly, as the one
            # way left (pyoxigraph documents it as unsafe while another process writes).
            self._store = _open_read_only(self.path)
            self._lease = None
            return
        try:
            store = _open_read_only(lease.view)
        except BaseException:
            lease.release()
            raise
        self._store, self._lease = store, lease

    def refresh(self) -> bool:
        """For a reader: move to the newest published view, if there is a newer one."""
        if not self.read_only or self._folder is None:
            return False
        current = self._folder.current_view()
        if current is None or (self._lease is not None and self._lease.view.name == current):
            return False
        old_store, old_lease = self._store, self._lease
        self._open_view()
        del old_store
        if old_lease is not None:
            old_lease.release()
        return True

    @property
    def view(self) -> str | None:
        """The state of the view a reader reads (None for a writer): the name of the first
        view that held it (kg.store.folder)."""
        if self._lease is None or self._folder is None:
            return None
        return self._folder.state_of(self._lease.view.name)

    def _recover(self) -> None:
        """Finish or undo what an interrupted writer left, saying what, then make sure
        readers see the committed state."""
        assert self._lock is not None and self._folder is not None
        interrupted = self._lock.interrupted
        actions: list[Callable[[], None]] = []
        messages: list[str] = []
        finished = self._finish_transactions()
        if finished:
            messages.append(finished)
        pending = self._folder.pending()
        if pending and pending.get("drop") and not self._committed(str(pending.get("activity", ""))):
            target = ox.NamedNode(str(pending["drop"]))
            self._invalidate([target])
            messages.append(f"removing {self._size(target):,} triples of an unfinished load into <{target.value}>, "
                            "which was empty before it started")
            actions.append(lambda: self._store.remove_graph(target))
        for g in self._store.named_graphs():
            if isinstance(g, ox.NamedNode) and g.value.startswith(_STAGING):
                messages.append(f"removing {self._size(g):,} triples of an unfinished load (a staging graph); "
                                "the graph it was to replace is unchanged")
                actions.append(lambda g=g: self._store.remove_graph(g))  # type: ignore[misc]
        for hook in _RECOVERY_HOOKS:
            found = hook(self)
            if found is not None:
                messages.append(found[0])
                actions.append(found[1])
        from kg.store.snapshots import snapshots_for

        messages += snapshots_for(self).resolve_pending(self)  # settles them as it goes: quick
        stale = self._folder.views_stale()
        if interrupted is not None:
            what = "; ".join(messages) if messages else (
                "nothing was half-written (every write is atomic): the store is as its last complete write left it")
            self._notice(f"recovering: {interrupted.describe()} was interrupted; {what}")
        elif messages:
            self._notice("recovering: " + "; ".join(messages))
        for action in actions:
            action()
        if self._copies is not None:
            self._copies.sweep()
        self._folder.end()
        if stale or actions or finished:
            self._publish()
        else:
            self._folder.collect_views()

    def _committed(self, activity: str) -> bool:
        return bool(activity) and self.ask(
            f"ASK {{ GRAPH {PROVENANCE} {{ ?g prov:wasGeneratedBy <{activity}> }} }}")

    def _size(self, graph: ox.NamedNode) -> int:
        return self.count(graph)

    def revision(self) -> str | None:
        """A name that changes with every write to a store on disk (the state of the view
        it last published for its readers); None for a store in memory."""
        return self._folder.current_state() if self._folder is not None else None

    def _publish(self, *, same_state: bool = False) -> None:
        if self._folder is not None and not self.read_only:
            with self._writing:
                self._folder.publish_view(lambda target: self._store.backup(str(target)), same_state=same_state)

    def compact(self) -> None:
        """Compact the whole store and give readers a view of it (kg.store.compaction)."""
        self._writable()
        with self._writing:
            self._store.optimize()
            self._publish(same_state=True)

    def _writable(self) -> None:
        if self.read_only:
            raise StoreError(
                f"this command opened the store at {self.location} read-only and cannot write to it",
                hint="This is a bug in the command: it should open the store as a writer.",
            )

    # -- primitives ----------------------------------------------------------------

    def _query(
        self, sparql: str, bindings: Mapping[str, Term] | None, max_rows: int | None
    ) -> QueryResult:
        substitutions = {ox.Variable(k): v for k, v in (bindings or {}).items()}
        # GraphStore.query binds variables with VALUES blocks; substitutions remain for
        # callers of _query that pass bindings directly. The union is the default graph
        # only when the query names no dataset (FROM / FROM NAMED) of its own.
        return self._result(self._run(sparql, substitutions=substitutions or None), max_rows)

    def _query_dataset(self, sparql: str, dataset: Dataset, max_rows: int | None) -> QueryResult:
        return self._result(self._run(sparql, default_graph=list(dataset.default),
                                      named_graphs=list(dataset.named)), max_rows)

    def _result(self, result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples,
                max_rows: int | None) -> QueryResult:
        try:
            if isinstance(result, ox.QuerySolutions):
                return Solutions.from_pyoxigraph(result, max_rows)
            if isinstance(result, ox.QueryBoolean):
                return bool(result)
            return list(result)
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
        order = ordered_cells(sparql)  # one order inside a GROUP_CONCAT's cell, on every store
        if order is None:
            return SolutionStream(variables, self._rows(result))
        return SolutionStream(variables, _ordered_rows(self._rows(result), variables, order))

    def stream_ordered(self, sparql: str, *, in_lots: bool = False) -> SolutionStream:
        """Like :meth:`stream`, but a result ordered by variables alone is sorted here, each
        term read once (Oxigraph reads IRIs and long strings back from disk at every
        comparison): a grouped query ``in_lots`` a few groups at a time, in flat memory
        (kg.keyfirst.whole); another held until sorted, as the store would hold it."""
        from kg.keyfirst import whole
        from kg.paging import key_function, order_of, shows, without_order

        key = order_of(sparql)
        if key is None or not shows(sparql, key):  # ordered by what it does not show: the store orders
            return self.stream(sparql)
        if in_lots and (found := whole(sparql, key, self._everything)):
            return SolutionStream(*found)
        stream = self.stream(without_order(sparql))
        if any(k.variable not in stream.variables for k in key):  # (SELECT *)
            return self.stream(sparql)
        return SolutionStream(stream.variables, iter(sorted(stream.rows, key=key_function(key, stream.variables))))

    def _rows(self, result: ox.QuerySolutions) -> Iterator[tuple[Term | None, ...]]:
        try:
            for solution in result:
                yield tuple(solution)
        except RuntimeError as exc:
            raise QueryError(f"the query failed: {exc}") from None
        except OSError as exc:
            raise StoreError(f"reading the store at {self.location} failed: {exc}") from exc

    def _run(self, sparql: str, **options: Any) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        """Start ``sparql``. Its default graph is the union of the named graphs, unless the
        query names a dataset (FROM / FROM NAMED) or ``options`` give one."""
        if "default_graph" not in options:
            options["use_default_graph_as_union"] = not names_dataset(sparql)
        try:
            return self._store.query(sparql, prefixes=PREFIXES, **options)
        except SyntaxError as exc:
            raise syntax_error(sparql, str(exc)) from None
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
        result = self._run(sparql)
        if not isinstance(result, ox.QuerySolutions):
            raise QueryError("expected a SELECT query")
        try:
            result.serialize(str(path), formats[fmt])
        except RuntimeError as exc:
            raise QueryError(f"the query failed: {exc}") from None
        except OSError as exc:
            raise StoreError(f"writing the results of a query on {self.location} to {path} failed: {exc}") from exc

    def update(self, sparql: str) -> None:
        self._writable()
        with self._writing:
            if self._copies is not None:  # before anything is written (kg.store.copies)
                self._copies.invalidate_for_update(sparql, PREFIXES)
            if self._folder is not None:
                self._folder.mark_stale()
            pause_point("store.before-commit")
            try:
                self._store.update(sparql, prefixes=PREFIXES)
            except SyntaxError as exc:
                raise syntax_error(sparql, str(exc), what="update") from None
            except (OSError, RuntimeError) as exc:
                raise StoreError(
                    f"the update was rejected and nothing was written: {exc}",
                    hint="The store is unchanged; fix the cause above and run the command again.",
                ) from exc
            pause_point("store.after-commit")
            self._publish_committed()

    def commit_transaction(self, operations: Sequence[Operation], graphs: Mapping[ox.NamedNode, int | None], *,
                           activity: str = "") -> None:
        """A transaction that starts with many triples of data goes through a journal and
        the bulk loader (:mod:`kg.store.bulkwrite`), as atomically; any other, as one update."""
        from kg.store import bulkwrite

        planned = bulkwrite.plan(operations) if self.path is not None else None
        if planned is None:
            super().commit_transaction(operations, graphs, activity=activity)
            return
        assert self.path is not None
        self._writable()
        with self._writing:
            folder = bulkwrite.work_folder(self.path)
            try:
                bulkwrite.prepare(self._store, planned, folder, activity=activity)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            # From here the transaction completes: now, or at the next open if this process dies.
            self._invalidate(planned.bulk)
            if self._folder is not None:
                self._folder.mark_stale()
            pause_point("store.journalled-transaction")
            bulkwrite.apply(self._store, folder, self.update)  # its last step, one update, publishes a view
            self._wrote(sum(len(step.triples) for steps in planned.bulk.values() for step in steps))

    def _wrote(self, triples: int) -> None:
        """Count ``triples`` written in bulk towards the next compaction (kg.store.compaction)."""
        from kg.store import compaction

        if self.path is not None:
            compaction.count(self.path, triples)

    def _finish_transactions(self) -> str | None:
        """Complete the transactions a killed writer journalled (kg.store.bulkwrite), first
        of all recovery: a snapshot asks whether its write completed."""
        from kg.store import bulkwrite

        found = bulkwrite.pending(self.path) if self.path is not None else {}
        if not found:
            return None
        journals = [record for record in found.values() if record is not None]
        commands = sorted({f"`{r['activity']}`" for r in journals if r.get("activity")})
        self._invalidate(ox.NamedNode(g["graph"]) for r in journals for g in r.get("graphs", []))
        bulkwrite.resume(self._store, found, self.update)
        if not journals:
            return "removed the work of a write that stopped before it changed anything"
        return f"completed the write{' of ' + ', '.join(commands) if commands else ''} that was journalled before " \
            "the interruption"

    def _publish_committed(self) -> None:
        """Publish a view after a commit. The commit stands whatever happens here: a view
        that cannot be written now leaves ``STALE`` behind, so that the next write (or the
        next process) publishes one, and is reported, never raised as a failed write."""
        try:
            self._publish()
        except OSError as exc:
            self._notice(f"the write is committed, but the view for readers could not be published yet: {exc}")

    @_one_write_at_a_time
    def load_file(
        self, path: Path, *, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool, activity: Activity,
        progress: Progress | None = None,
    ) -> int:
        """Bulk-load ``path`` into ``graph``, replacing it (see :mod:`kg.store.bulk`).

        An empty target graph gets the file straight from Oxigraph's bulk loader (given
        the path, for an uncompressed file), while a thread works out the digest and the
        triple count; a failure removes what was loaded. A graph that holds data is
        replaced by the difference only, journalled first, so that a failure or a kill
        leaves the old graph or (completed at the next open) the new one."""
        self._writable()
        if fmt == ox.RdfFormat.RDF_XML:
            check_rdfxml(path, gzipped=gzipped)  # no entity bombs reach the parser
        from kg.store.bulk import folds_graphs

        try:
            # A file that may name graphs is folded into ``graph`` (never written to the graphs it names).
            if not folds_graphs(fmt) and self._is_empty(graph):
                count, delta = self._first_load(path, graph, fmt, gzipped, activity, progress), None
            else:
                count, delta = self._replace(path, graph, fmt, gzipped, activity, progress)
        except RDFImportError:
            raise
        except MemoryError as exc:
            from kg.inputlimits import parser_gave_up

            raise parser_gave_up(path, exc) from None
        except (SyntaxError, ValueError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
            raise unparsable(path, fmt, exc) from None
        except OSError as exc:
            raise RDFImportError(f"could not load it: {exc}", path=str(path),
                                 hint="Nothing was changed in the store. Check the file and the disk.") from None
        activity.stats.setdefault("triples", count)
        record(self, Changes(graphs={graph.value}, deltas={graph.value: delta} if delta is not None else {}))
        self._wrote(int(activity.stats.get("added", count)) + int(activity.stats.get("removed", 0)))
        return count

    def _first_load(self, path: Path, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool,
                    activity: Activity, progress: Progress | None) -> int:
        from kg.store import bulk

        if self._folder is not None:  # a killed load is removed by the next open (see _recover)
            self._folder.begin({"drop": graph.value, "activity": activity.iri.value})
            self._folder.mark_stale()
        self._invalidate([graph])
        copy = self._copies.temporary(graph) if self._copies is not None else None
        facts = bulk.FileFacts(path, fmt, gzipped, copy, progress)
        facts.start()
        if progress is not None:  # the bulk loader does not say how far it is
            progress("loading", 0, 0)
        try:
            # within kg.inputlimits' bounds: no literal, no decompressed size past them is loaded
            with bulk.load_source(path, gzipped, fmt) as source:
                self._store.bulk_load(**source, format=fmt, to_graph=graph)
            digest, count = facts.result()
            if progress is not None:
                progress("loading", count, count)
            pause_point("store.loaded")
            self.update(provenance_update(activity, {graph: (digest, count)}, activity.started))
        except BaseException:
            facts.join()
            if copy is not None:
                copy.unlink(missing_ok=True)
            self._clear(graph)
            raise
        finally:
            if self._folder is not None:
                self._folder.end()
        if copy is not None and self._copies is not None:
            pause_point("store.loaded-committed")
            try:
                self._copies.install(graph, copy, activity=activity.iri.value, digest=digest,
                                     blank_ids="file" if facts.blank_labels else "store")
            except OSError as exc:  # the load stands; it just has no copy
                copy.unlink(missing_ok=True)
                self._notice(f"no import copy of <{graph.value}> was kept: {exc}")
        return count

    def _replace(self, path: Path, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool, activity: Activity,
                 progress: Progress | None) -> tuple[int, Delta | None]:
        """The replacement by the difference, and that difference where it is small (see
        :meth:`kg.store.bulk.Diff.delta`)."""
        from kg.store import bulk

        folder = bulk.work_folder(self.path)
        old = self.import_copy(graph)
        try:
            change = bulk.diff(self._store, graph, path, fmt, gzipped, folder,
                               old_copy=old.path if old is not None and old.blank_ids == "store" else None,
                               progress=progress)
            if change.skipped_provenance:
                activity.stats["skipped_provenance"] = change.skipped_provenance
            activity.stats.setdefault("added", change.added)
            activity.stats.setdefault("removed", change.removed)
            provenance = prefix_block("") + provenance_update(
                activity, {graph: (change.digest, change.triples)}, activity.started)
            bulk.write_journal(change, provenance, activity.iri.value)
            delta = change.delta()
        except BaseException:
            bulk.discard(folder)
            raise
        # From here the replacement completes: now, or at the next open if this process dies.
        self._invalidate([graph])
        if self._folder is not None:
            self._folder.mark_stale()
        pause_point("store.journalled")
        bulk.apply(self._store, folder, self.update, self._install_replaced, progress)
        return change.triples, delta

    def _install_replaced(self, graph: ox.NamedNode, content: Path, activity: str, digest: str) -> None:
        if self._copies is None:
            return
        try:
            self._copies.install(graph, content, activity=activity, digest=digest, blank_ids="store", keep=True)
        except OSError as exc:  # the replacement stands; it just has no copy
            self._notice(f"no import copy of <{graph.value}> was kept: {exc}")

    def _invalidate(self, graphs: Iterable[ox.NamedNode]) -> None:
        if self._copies is not None:
            self._copies.invalidate(graphs)

    def import_copy(self, graph: ox.NamedNode) -> ImportCopy | None:
        """The import copy of ``graph`` (see :mod:`kg.store.copies`): its content as
        N-Triples lines, written by the load that last replaced it whole. None when there
        is none, or when the provenance this store reads (a reader's view included) does
        not name the load that wrote it. A later write deletes the file: open it at once,
        and treat a file that has gone as no copy."""
        if self._copies is None:
            return None
        rows = self.select(
            f"SELECT ?act ?h ?n WHERE {{ GRAPH {PROVENANCE} {{ {graph} prov:wasGeneratedBy ?act ; "
            "tkg:contentHash ?h ; tkg:tripleCount ?n } } LIMIT 2").rows
        if len(rows) != 1:
            return None
        act, digest, count = rows[0]["act"], rows[0]["h"], rows[0]["n"]
        if not isinstance(act, ox.NamedNode) or not isinstance(digest, ox.Literal) or not isinstance(count, ox.Literal):
            return None
        return self._copies.find(graph, act.value, digest.value, int(count.value))

    @_one_write_at_a_time
    def replace_graphs(
        self, graphs: Mapping[ox.NamedNode, Sequence[ox.Triple]], *, drop: Iterable[ox.NamedNode] = (),
        then: str = "",
    ) -> None:
        """As :meth:`GraphStore.replace_graphs`: the triples go into staging graphs through
        the bulk loader, and one update moves them in (recovery drops staging graphs a
        killed process left, so the store is either as it was or wholly replaced)."""
        self._writable()
        self._invalidate([*graphs, *drop])
        staged: dict[ox.NamedNode, ox.NamedNode] = {}
        try:
            for graph, triples in graphs.items():
                if triples:
                    tmp = ox.NamedNode(_STAGING + uuid.uuid4().hex)
                    self._store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object, tmp) for t in triples)
                    staged[graph] = tmp
            pause_point("store.staged")
            ops = [f"DROP SILENT GRAPH {g}" for g in [*graphs, *drop]]
            ops += [f"MOVE SILENT {tmp} TO {g}" for g, tmp in staged.items()]
            if then:
                ops.append(then)
            self.update(prefix_block(then) + " ;\n".join(ops))
            record(self, Changes(graphs={g.value for g in [*graphs, *drop]}))
        finally:
            for tmp in staged.values():
                if self._store.contains_named_graph(tmp):
                    self._store.remove_graph(tmp)

    def _clear(self, graph: ox.NamedNode) -> None:
        """Empty ``graph`` a batch at a time (one transaction for all would hold it all in memory)."""
        self._invalidate([graph])
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
        from kg.store import compaction

        writer = getattr(self, "_lock", None) is not None
        self._close()
        if writer and self.path is not None:
            try:
                due = compaction.due(self.path)
            except KGError as exc:  # a KG_COMPACT_TRIPLES that is not a count: the write stands
                self._notice(f"no compaction started: {exc}")
                return
            if due:
                compaction.start(self.path)  # once this writer has let go of the store

    def _close(self) -> None:
        if getattr(self, "_store", None) is not None:
            if not self.read_only:
                self._store.flush()
            del self._store
            self._store = None  # type: ignore[assignment]
        if getattr(self, "_lease", None) is not None:
            assert self._lease is not None
            self._lease.release()
            self._lease = None
        if getattr(self, "_lock", None) is not None:
            assert self._lock is not None
            self._lock.release()
            self._lock = None

    # -- helpers -------------------------------------------------------------------

    def _is_empty(self, graph: ox.NamedNode) -> bool:
        return next(iter(self._store.quads_for_pattern(None, None, None, graph)), None) is None


def _open(path: Path, gzipped: bool, fmt: ox.RdfFormat | None = None) -> IO[bytes]:
    from kg.store.bulk import open_rdf

    return open_rdf(path, gzipped, fmt)


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return "file:" + digest.hexdigest()


#: Recovery steps of other modules (snapshots register one): each looks at the store and
#: returns what it will do (a message) and how, or None when it has nothing to do.
RecoveryHook = Callable[["OxigraphStore"], "tuple[str, Callable[[], None]] | None"]
_RECOVERY_HOOKS: list[RecoveryHook] = []


def add_recovery_hook(hook: RecoveryHook) -> None:
    if hook not in _RECOVERY_HOOKS:
        _RECOVERY_HOOKS.append(hook)


def _journalled_imports(store: OxigraphStore) -> tuple[str, Callable[[], None]] | None:
    """Recovery: finish the graph replacements a killed ``load_file`` journalled (kg.store.bulk)."""
    from kg.store import bulk

    path = store.path
    if path is None:
        return None
    found = bulk.pending(path)
    if not found:
        return None
    done = [f"<{g}>" for g in found if g]
    message = (f"completing the replacement of {', '.join(done)} that an interrupted import had journalled"
               if done else "removing the work of an import that stopped before it changed anything")

    def finish() -> None:
        store._invalidate(ox.NamedNode(g) for g in found if g)
        bulk.resume(store._store, path, store.update, store._install_replaced)

    return message, finish


add_recovery_hook(_journalled_imports)


def _open_read_only(path: Path) -> ox.Store:
    try:
        return ox.Store.read_only(str(path))
    except OSError as exc:
        raise StoreError(f"cannot open the store at {path} for reading: {exc}",
                         hint="Check that --store (or KG_STORE) names a TechKG store.") from exc


def _publish_if_free(path: Path, folder: StoreFolder, *, create_parents: bool, notice: Notice) -> None:
    """Publish a view for readers when none is current, if no writer holds the store
    (the holder publishes one itself when it writes)."""
    folder.prepare(create_parents=create_parents)
    try:  # (never a lock taken and let go first: that would forget who was interrupted)
        OxigraphStore(path, command="kg (publishing a view for readers)", notice=notice).close()
    except StoreLockedError:
        return  # a writer came in between: it publishes when it writes
