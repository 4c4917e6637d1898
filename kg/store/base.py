"""The store interface every backend implements, and the transaction built on it.

A backend supplies five primitives: ``_query`` (SPARQL over the union of the named
graphs), ``update`` (one atomic SPARQL 1.1 Update request), ``load_file`` (the bulk
path), ``dump`` and ``named_graphs``. Everything else, transactions included, is
written once here on top of them, so the embedded Oxigraph store and a remote SPARQL
endpoint behave the same.

A :class:`Transaction` collects graph replacements, inserts, deletes and update
operations, then commits them (:meth:`GraphStore.commit_transaction`) as *one* SPARQL
Update request together with the provenance of every graph it touched. Nothing reaches
the store before the commit, so an exception while the new content is being produced leaves the store exactly as
it was, and the store applies the one request atomically. (The embedded store writes a
transaction of many triples through a journal instead, as atomically: :mod:`kg.store.bulkwrite`.)
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Literal

import pyoxigraph as ox

from kg.derived import DELTA_LIMIT, Changes, Delta, record
from kg.errors import QueryError, RDFImportError
from kg.graphs import PROVENANCE, USER_GRAPHS, GraphKind, graph_kind
from kg.paging import SortKey
from kg.results import QueryResult, Solutions, Term, ordered_cells
from kg.sparqltext import inject_values
from kg.store.provenance import Activity, content_hash, now, ntriples, provenance_update
from kg.vocab import PREFIXES, TKG

if TYPE_CHECKING:
    from kg.store.copies import ImportCopy
    from kg.store.snapshots import Snapshot, Snapshots

#: Activity and content_hash are part of the store's interface (kg.store.provenance makes them).
__all__ = ["Activity", "Data", "Dataset", "GraphInfo", "GraphStore", "Operation", "Progress", "SolutionStream",
           "Transaction", "content_hash", "operation_text", "prefix_block", "unparsable"]

#: How far a long step has come: ``(step, done, total)``, ``total`` 0 when it is not known.
#: :meth:`GraphStore.load_file`'s steps: ``reading`` (megabytes of the file), then into an
#: empty graph ``loading`` (triples, known when done), or else ``comparing`` (with the graph
#: it replaces), ``removing`` and ``adding`` (triples); for a store on a server, ``parsing``
#: (triples).
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Data:
    """A transaction's write of triples to one graph: ``insert`` them, ``delete`` them, or
    ``replace`` the graph with them. Kept as triples until the commit, so that a backend
    can write a large transaction in bulk (:mod:`kg.store.bulkwrite`)."""

    kind: Literal["insert", "delete", "replace"]
    graph: ox.NamedNode
    triples: Sequence[ox.Triple]

    def operations(self) -> list[str]:
        """The SPARQL Update operations it stands for."""
        block = f"{{ GRAPH {self.graph} {{\n{ntriples(self.triples)}\n}} }}" if self.triples else ""
        if self.kind == "replace":
            return [f"DROP SILENT GRAPH {self.graph}", *([f"INSERT DATA {block}"] if block else [])]
        return [f"{'INSERT' if self.kind == 'insert' else 'DELETE'} DATA {block}"] if block else []


#: One step of a transaction, in the order it was added: data, or a raw SPARQL Update operation.
Operation = Data | str


def operation_text(operations: Iterable[Operation]) -> list[str]:
    """The SPARQL Update operations of a transaction's steps, in order."""
    out: list[str] = []
    for op in operations:
        out += op.operations() if isinstance(op, Data) else [op]
    return out


def unparsable(path: Path, fmt: ox.RdfFormat, exc: BaseException) -> RDFImportError:
    """The error :meth:`GraphStore.load_file` raises, on every backend, for a file that does
    not parse as ``fmt``."""
    return RDFImportError(f"could not load it as {fmt.name}: {exc}", path=str(path),
                          hint="Nothing was changed in the store. Fix the file, or pass --syntax if the "
                          "file extension does not match its syntax.")


def prefix_block(query: str) -> str:
    """PREFIX declarations for our standard prefixes that ``query`` does not declare itself."""
    lowered = query.lower()
    lines = [
        f"PREFIX {name}: <{base}>"
        for name, base in PREFIXES.items()
        if f"prefix {name}:" not in lowered
    ]
    return "\n".join(lines) + "\n"


@dataclass
class SolutionStream:
    """SELECT solutions as they come: ``variables`` and an iterator of rows (tuples of
    terms in variable order, None where unbound). Iterate it once."""

    variables: list[str]
    rows: Iterator[tuple[Term | None, ...]]

    def __iter__(self) -> Iterator[tuple[Term | None, ...]]:
        return self.rows


@dataclass(frozen=True)
class Dataset:
    """The RDF dataset a query runs over when a client names one with the query (the
    SPARQL 1.1 Protocol's ``default-graph-uri`` and ``named-graph-uri``): the graphs
    merged into its default graph, and the graphs ``GRAPH`` may match. Either may be
    empty; the protocol's dataset replaces any ``FROM`` in the query."""

    default: tuple[ox.NamedNode, ...] = ()
    named: tuple[ox.NamedNode, ...] = ()


@dataclass(frozen=True)
class GraphInfo:
    """What the provenance graph says about one named graph."""

    graph: ox.NamedNode
    triples: int
    modified: str | None = None
    activity: str | None = None
    hash: str | None = None


class GraphStore(abc.ABC):
    """A quad store holding TechKG's named graphs. Queries see their union."""

    #: Where the store lives, for messages: a directory or an endpoint URL.
    location: str = ""
    #: Whether each request costs a network round trip (a server): then readers that ask
    #: many small questions (kg.validate) send them together, :attr:`query_batch` at a
    #: time as one UNION, or side by side where that is 1.
    batches_queries: bool = False
    query_batch: int = 1

    # -- primitives a backend provides -------------------------------------------------

    @abc.abstractmethod
    def _query(
        self, sparql: str, bindings: Mapping[str, Term] | None, max_rows: int | None
    ) -> QueryResult:
        """Run ``sparql`` over the union of all named graphs, with ``bindings`` as
        pre-bound variables (never pasted into the text); stop after ``max_rows`` rows."""

    @abc.abstractmethod
    def update(self, sparql: str) -> None:
        """Apply one SPARQL 1.1 Update request atomically."""

    @abc.abstractmethod
    def load_file(
        self, path: Path, *, graph: ox.NamedNode, fmt: ox.RdfFormat, gzipped: bool, activity: Activity,
        progress: Progress | None = None,
    ) -> int:
        """Bulk-load an RDF file into ``graph``, replacing it; return the triple count.
        ``progress`` is told how far each step is (:data:`Progress`)."""

    @abc.abstractmethod
    def dump(self, out: IO[bytes], *, fmt: ox.RdfFormat, graph: ox.NamedNode | None = None) -> None:
        """Write one graph (or the whole dataset, for quad formats) to ``out``."""

    @abc.abstractmethod
    def named_graphs(self) -> list[ox.NamedNode]:
        """Every non-empty named graph."""

    def close(self) -> None:  # noqa: B027 - optional for backends
        """Release the store (locks, connections)."""

    def commit_operations(self, operations: Sequence[str], graphs: Mapping[ox.NamedNode, int | None]) -> None:
        """Apply a transaction's SPARQL Update ``operations`` in order, atomically. ``graphs``
        names every graph they write, with the triples it will hold where the transaction
        knows (a replaced graph). Here: one request. A backend whose server limits a
        request's size overrides it to stage them (see :mod:`kg.store.remote`)."""
        # Data blocks hold N-Triples with full IRIs: only the other operations can use prefixes.
        written = " ".join(op for op in operations if not op.startswith(("INSERT DATA", "DELETE DATA")))
        self.update(prefix_block(written) + " ;\n".join(operations))

    def commit_transaction(self, operations: Sequence[Operation], graphs: Mapping[ox.NamedNode, int | None], *,
                           activity: str = "") -> None:
        """Apply a transaction's steps in order, atomically: here, :meth:`commit_operations`
        of their text (the embedded store writes a large transaction in bulk instead).
        ``activity`` names the command that writes."""
        self.commit_operations(operation_text(operations), graphs)

    def _query_dataset(self, sparql: str, dataset: Dataset, max_rows: int | None) -> QueryResult:
        """Run ``sparql`` over ``dataset`` instead of the union (backends that can)."""
        raise QueryError(f"the store at {self.location} cannot run a query over a given dataset",
                         hint="Name the graphs with FROM / FROM NAMED in the query instead.")

    # -- everything below is shared ----------------------------------------------------

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def query(
        self,
        sparql: str,
        bindings: Mapping[str, Term | Sequence[Term]] | None = None,
        *,
        max_rows: int | None = None,
        dataset: Dataset | None = None,
    ) -> QueryResult:
        """Any SPARQL query. Our standard prefixes (tkg:, skos:, prov:, ...) are predeclared.

        ``bindings`` pre-bind variables to RDF terms (a list of terms: one row each)
        through VALUES blocks in every WHERE group (see kg.sparqltext), never by pasting text. SELECT results stop after
        ``max_rows`` rows, with ``Solutions.truncated`` set. The default graph is the
        union of the named graphs, unless the query names its own with ``FROM`` /
        ``FROM NAMED``, or ``dataset`` (which then wins over the query's) is given."""
        if bindings:
            sparql = inject_values(sparql, bindings)
        if dataset is not None:
            result = self._query_dataset(sparql, dataset, max_rows)
        else:
            result = self._query(sparql, None, max_rows)
        if isinstance(result, Solutions) and (order := ordered_cells(sparql)) is not None:
            result.rows = [order(row) for row in result.rows]  # one order inside a cell, on every store
        return result

    def select(self, sparql: str, bindings: Mapping[str, Term | Sequence[Term]] | None = None) -> Solutions:
        result = self.query(sparql, bindings)
        if not isinstance(result, Solutions):
            raise QueryError("expected a SELECT query", hint="Use kg sparql for ASK/CONSTRUCT queries.")
        return result

    def stream(self, sparql: str, bindings: Mapping[str, Term | Sequence[Term]] | None = None) -> SolutionStream:
        """A SELECT query's solutions one row at a time, without holding them all: the
        path for results that can run into the millions. Each row is a tuple of terms
        (None where unbound) in the order of ``variables``. Backends that can stream
        override this; the generic one reads the whole result first."""
        result = self.select(sparql, bindings)
        variables = result.variables
        return SolutionStream(variables, (tuple(row.get(v) for v in variables) for row in result.rows))

    def stream_ordered(self, sparql: str, *, in_lots: bool = False) -> SolutionStream:
        """:meth:`stream` for a query whose order the caller wants kept as is; a backend
        may sort the rows itself where that is faster than the store's ORDER BY, and read a
        grouped query ``in_lots`` of groups (queries ``# whole: in lots``)."""
        return self.stream(sparql)

    def page(self, sparql: str, key: Sequence[SortKey], limit: int | None,
             after: Sequence[Term | None] | None) -> SolutionStream:
        """One page of a SELECT query (see kg.paging): ``limit + 1`` rows at most, in ``key``
        order, after the row whose key is ``after``. A grouped query is narrowed to its page
        key first (kg.keyfirst): only the page's rows are filled in. The page is picked here
        from the store's rows, unordered, in TechKG's order on every store: Oxigraph's ORDER
        BY reads IRIs and long strings back from disk at each comparison (about 40 s to sort
        100,000 paper IRIs), each row's terms are read once here, and Virtuoso 7's order
        is not always TechKG's."""
        from kg.keyfirst import page as from_small_side
        from kg.paging import select_page, without_order

        def pick(text: str, cursor: Sequence[Term | None] | None,
                 ) -> tuple[list[str], Iterator[tuple[Term | None, ...]]]:
            stream = self.stream(without_order(text))
            return stream.variables, select_page(stream.variables, stream.rows, key, limit, cursor)

        found = from_small_side(sparql, key, limit, after, pick, self._everything) if limit is not None else None
        return SolutionStream(*(found or pick(sparql, after)))

    def _everything(self, text: str) -> tuple[list[str], Iterator[tuple[Term | None, ...]]]:
        """Every row of a SELECT query, in any order: (variables, rows)."""
        stream = self.stream(text)
        return stream.variables, stream.rows

    def select_to_file(self, sparql: str, path: Path, *, fmt: str = "csv") -> None:
        """Write a SELECT query's solutions to ``path`` in a SPARQL 1.1 results format
        (csv, tsv, json, xml): the bulk path for consumers such as the analytics
        materialiser. Backends override it to stream without building Python rows."""
        from kg.results import serialize_solutions

        path.write_bytes(serialize_solutions(self.select(sparql), fmt))

    def ask(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> bool:
        result = self.query(sparql, bindings)
        if not isinstance(result, bool):
            raise QueryError("expected an ASK query")
        return result

    def triples(self, graph: ox.NamedNode | None = None) -> list[ox.Triple]:
        """All triples of one named graph, or of the union."""
        where = f"GRAPH {graph} {{ ?s ?p ?o }}" if graph is not None else "?s ?p ?o"
        result = self.query(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {where} }}")
        assert isinstance(result, list)
        return result

    def count(self, graph: ox.NamedNode | None = None) -> int:
        """Triples in one named graph, or quads over all named graphs."""
        where = f"GRAPH {graph} {{ ?s ?p ?o }}" if graph is not None else "GRAPH ?g { ?s ?p ?o }"
        rows = self.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ {where} }}")
        value = rows.rows[0]["n"] if rows.rows else None
        return int(value.value) if isinstance(value, ox.Literal) else 0

    def graph_info(self) -> list[GraphInfo]:
        """Each named graph with its size and what the provenance graph records about it.

        The size is the triple count the provenance graph records, where it has one: every
        write records its graphs anew, with their count where the writer knows it (a whole
        load, a replacement), as :mod:`kg.validate` reads it. The other graphs are counted,
        in one grouped query (at 700k papers, counting every graph takes 6.5 s; the small
        graphs of the reader, 0.1 s; the links graph after a write that linked a few papers,
        2 s more). A server
        (:attr:`batches_queries`), which other clients may write without a record, has every
        graph counted. (Joining the records to every quad while counting them would cost a
        lookup per quad.)"""
        records: dict[str, dict[str, str]] = {}
        for row in self.select(
            f"""SELECT ?g ?modified ?activity ?hash ?count WHERE {{ GRAPH {PROVENANCE} {{
                  ?g dcterms:modified ?modified .
                  OPTIONAL {{ ?g prov:wasGeneratedBy ?act . ?act rdfs:label ?activity }}
                  OPTIONAL {{ ?g tkg:contentHash ?hash }}
                  OPTIONAL {{ ?g tkg:tripleCount ?count }} }} }}"""
        ):
            g = row["g"]
            if isinstance(g, ox.NamedNode):
                records[g.value] = {k: row[k].value for k in ("modified", "activity", "hash", "count")  # type: ignore[union-attr]
                                    if row[k] is not None}
        graphs = self.named_graphs()
        sizes = {} if self.batches_queries else {
            g: int(r["count"]) for g, r in records.items() if r.get("count", "").isdigit()}
        unknown = [g for g in graphs if g.value not in sizes]
        if unknown:
            counted = self.select("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
                                  None if self.batches_queries else {"g": unknown})
            for row in counted:
                g, n = row["g"], row["n"]
                if isinstance(g, ox.NamedNode) and isinstance(n, ox.Literal):
                    sizes[g.value] = int(n.value)
        out = []
        for g in sorted(graphs, key=lambda node: node.value):
            if g.value not in sizes:  # (emptied meanwhile)
                continue
            record = records.get(g.value, {})
            out.append(GraphInfo(graph=g, triples=sizes[g.value], modified=record.get("modified"),
                                 activity=record.get("activity"), hash=record.get("hash")))
        return out

    def update_unrecorded(self, sparql: str) -> None:
        """Apply a SPARQL Update that no provenance record describes (a client's, through
        ``kg serve --allow-update``). The triple counts recorded for the graphs it may write
        are dropped first, so that :meth:`graph_info`, ``kg validate`` and the analytics'
        signatures count those graphs again rather than trust a count it changed. (Two
        updates: in Oxigraph a client's prologue may not follow another operation.)"""
        from kg.store.copies import update_may_write

        counted = [r["g"] for r in self.select(
            f"SELECT ?g WHERE {{ GRAPH {PROVENANCE} {{ ?g tkg:tripleCount ?n }} }}").rows]
        written = [g for g in counted if isinstance(g, ox.NamedNode) and update_may_write(sparql, g.value, PREFIXES)]
        if written:  # first, on its own: a count dropped is counted again, while one left would be wrong
            self.update(" ;\n".join(f"DELETE WHERE {{ GRAPH {PROVENANCE} {{ {g} {TKG.tripleCount} ?n }} }}"
                                     for g in written))
        self.update(sparql)

    def graph_hash(self, graph: ox.NamedNode) -> str | None:
        rows = self.select(
            f"SELECT ?h WHERE {{ GRAPH {PROVENANCE} {{ {graph} tkg:contentHash ?h }} }} LIMIT 1"
        )
        return rows.rows[0]["h"].value if rows.rows and rows.rows[0]["h"] else None  # type: ignore[union-attr]

    def import_copy(self, graph: ox.NamedNode) -> ImportCopy | None:
        """The graph's content as N-Triples lines kept beside the store by its last whole
        load (see :mod:`kg.store.copies`), or None: remote stores keep none."""
        return None

    def replace_graphs(
        self, graphs: Mapping[ox.NamedNode, Sequence[ox.Triple]], *, drop: Iterable[ox.NamedNode] = (),
        then: str = "",
    ) -> None:
        """Replace each of ``graphs`` with its triples, drop the ``drop`` graphs and run the
        update ``then``, as one atomic update, with no provenance of its own (``kg restore``
        brings back the provenance it had). The embedded store stages the triples first."""
        ops = [f"DROP SILENT GRAPH {g}" for g in [*graphs, *drop]]
        ops += [f"INSERT DATA {{ GRAPH {g} {{\n{ntriples(t)}\n}} }}" for g, t in graphs.items() if t]
        if then:
            ops.append(then)
        self.update(prefix_block(then) + " ;\n".join(ops))

    def transaction(self, activity: Activity | str) -> Transaction:
        """Collect changes; they are written together, atomically, when the block ends
        without an exception (or when :meth:`Transaction.commit` is called)."""
        if isinstance(activity, str):
            activity = Activity(activity)
        return Transaction(self, activity)


#: The largest net change of a graph whose new size a transaction works out from the
#: recorded count (:meth:`Transaction._size_after`); past it, the size is left to be counted.
SIZE_DELTA_MOST = 50_000


class Transaction:
    """Changes to several named graphs, applied atomically (as one SPARQL Update).

    >>> with store.transaction("kg build") as tx:          # doctest: +SKIP
    ...     tx.replace_graph(CATALOG, catalog_triples)
    ...     tx.insert(READING, status_triples)
    """

    def __init__(self, store: GraphStore, activity: Activity) -> None:
        self.store = store
        self.activity = activity
        self._ops: list[Operation] = []
        self._touched: dict[ox.NamedNode, tuple[str | None, int | None]] = {}
        self._sources: dict[ox.NamedNode, list[str]] = {}
        self._dropped: list[ox.NamedNode] = []
        self._replaced_user: set[ox.NamedNode] = set()
        self._snapshot_first = False
        self.unchanged: list[ox.NamedNode] = []
        self._after: list[str] = []
        self.committed = False
        #: Where the snapshot of the user's graphs goes when this transaction replaces or
        #: drops one of them (None: the store's snapshot folder; see kg.store.snapshots).
        self.snapshot_to: Snapshots | None = None
        #: The snapshot taken at commit, if one was.
        self.snapshot_taken: Snapshot | None = None
        #: What this transaction changes, for the keepers of derived data (kg.derived): the
        #: graphs are added at commit; writers add the papers and decisions they change.
        self.changes = Changes()

    def replace_graph(
        self, graph: ox.NamedNode, triples: Iterable[ox.Triple], *, force: bool = False,
        sources: Sequence[str] = (),
    ) -> bool:
        """Replace ``graph`` with ``triples``, made from ``sources`` (files or URLs, recorded
        as the graph's primary sources). Returns False (and writes nothing) when the
        content is identical to what the store already holds, unless ``force`` (a run
        that checked a source and found nothing new still records its activity)."""
        content = list(triples)
        digest = content_hash(content)
        if not force and self.store.graph_hash(graph) == digest:
            self.unchanged.append(graph)
            return False
        self._ops.append(Data("replace", graph, content))
        self._touched[graph] = (digest, len(set(content)))
        if sources:
            self._sources[graph] = list(sources)
        if graph_kind(graph) is GraphKind.user:
            self._replaced_user.add(graph)
        return True

    def add_sources(self, graph: ox.NamedNode, sources: Sequence[str]) -> None:
        """Record ``sources`` (files or URLs) as what ``graph`` is made from, should this
        transaction change it."""
        self._sources.setdefault(graph, []).extend(s for s in sources if s not in self._sources.get(graph, ()))

    def drop_graph(self, graph: ox.NamedNode) -> bool:
        """Remove ``graph`` and its provenance record; False when it is empty already."""
        if self.store.count(graph) == 0:
            return False
        self._ops.append(f"DROP SILENT GRAPH {graph}")
        self._dropped.append(graph)
        if graph_kind(graph) is GraphKind.user:
            self._replaced_user.add(graph)
        return True

    def snapshot_first(self) -> None:
        """Keep a snapshot of the user's graphs before this transaction commits, as a
        replacement of one does, so that ``kg undo`` takes back even a small change to
        them (a note, say)."""
        self._snapshot_first = True

    def insert(self, graph: ox.NamedNode, triples: Iterable[ox.Triple]) -> None:
        content = list(triples)
        if content:
            self._ops.append(Data("insert", graph, content))
            self._touched.setdefault(graph, (None, None))

    def delete(self, graph: ox.NamedNode, triples: Iterable[ox.Triple]) -> None:
        content = list(triples)
        if content:
            self._ops.append(Data("delete", graph, content))
            self._touched.setdefault(graph, (None, None))

    def update(self, sparql: str, *, touches: Iterable[ox.NamedNode]) -> None:
        """A raw SPARQL Update operation; ``touches`` names the graphs it changes."""
        self._ops.append(sparql)
        for graph in touches:
            self._touched.setdefault(graph, (None, None))

    def update_after(self, sparql: str) -> None:
        """A raw SPARQL Update operation applied after the provenance records are written
        (to add to them); it touches no graph's record."""
        self._after.append(sparql)

    @property
    def touched(self) -> list[ox.NamedNode]:
        return [*self._touched, *self._dropped]

    def commit(self) -> None:
        """Apply the changes as one update. When they replace or drop a user-owned graph,
        a snapshot of the user's graphs is written first (see :mod:`kg.store.snapshots`)."""
        if self.committed:
            return
        self.committed = True
        if not self._ops and not self._after:
            return
        ended = now()
        touched = {g: v for g, v in self._touched.items() if g not in self._dropped}
        deltas = self._deltas()
        for graph, (digest, count) in touched.items():
            if count is None and graph.value in deltas:
                try:
                    touched[graph] = (digest, self._size_after(graph, deltas[graph.value]))
                except Exception:  # noqa: BLE001 - a size left unknown is counted later; the write goes on
                    pass
        ops: list[Operation] = list(self._ops)
        if touched or self._dropped:
            ops.append(provenance_update(self.activity, touched, ended, sources=self._sources,
                                         dropped=self._dropped))
        ops += self._after
        graphs: dict[ox.NamedNode, int | None] = {
            **{g: n for g, (_, n) in touched.items()}, **dict.fromkeys(self._dropped, 0), PROVENANCE: None}
        self.changes.graphs |= {g.value for g in self.touched}
        self.changes.deltas = deltas
        if not (self._replaced_user or self._snapshot_first) or not any(self.store.count(g) for g in USER_GRAPHS):
            # nothing of the user's to lose: no snapshot
            self.store.commit_transaction(ops, graphs, activity=self.activity.label)
        else:
            from kg.store.snapshots import kept_before

            with kept_before(self.store, self.activity, folder=self.snapshot_to) as snapshot:
                self.snapshot_taken = snapshot
                self.store.commit_transaction(ops, graphs, activity=self.activity.label)
        record(self.store, self.changes)

    def _size_after(self, graph: ox.NamedNode, delta: Delta) -> int | None:
        """The triples ``graph`` holds once this transaction's inserts and deletes (``delta``,
        their net change) are applied: the count its provenance records (kept so by every
        write), plus the triples it ends up with that it does not hold yet, less those it
        loses that it holds, each triple in the store's own form (a decimal written ``0.800``
        is the stored ``0.8``: :func:`kg.store.copies.canonical_triples`). None where no
        count is recorded, a triple has a blank node, the change is large, or the store is a
        server (which counts anyway: :meth:`GraphStore.graph_info`). So a graph loaded whole
        keeps its count through later small writes, and ``kg stats`` and ``kg validate`` need
        not count it (the links graph, which every import writes: 3.1M triples at 700k)."""
        if self.store.batches_queries or len(delta) > SIZE_DELTA_MOST:
            return None
        if any(isinstance(term, ox.BlankNode) for triple in delta for term in (triple.subject, triple.object)):
            return None
        rows = self.store.select(f"SELECT ?n WHERE {{ GRAPH {PROVENANCE} {{ {graph} tkg:tripleCount ?n }} }}").rows
        before = rows[0]["n"] if len(rows) == 1 else None
        if not isinstance(before, ox.Literal) or not before.value.isdigit():
            return None
        from kg.store.copies import canonical_triples

        after: dict[ox.Triple, bool] = {}  # in the store's form: whether the graph holds it after the commit
        for op in self._ops:
            if isinstance(op, Data) and op.graph == graph:
                for t in ox.parse(canonical_triples(op.triples), format=ox.RdfFormat.N_TRIPLES):
                    after[ox.Triple(t.subject, t.predicate, t.object)] = op.kind == "insert"
        values = " ".join(f"({t.subject} {t.predicate} {t.object})" for t in after)
        held = {ox.Triple(r["s"], r["p"], r["o"]) for r in self.store.select(  # type: ignore[arg-type]
            f"SELECT ?s ?p ?o WHERE {{ VALUES (?s ?p ?o) {{ {values} }} GRAPH {graph} {{ ?s ?p ?o }} }}").rows}
        return int(before.value) + sum(1 for t, kept in after.items() if kept and t not in held) \
            - sum(1 for t, kept in after.items() if not kept and t in held)

    def _deltas(self) -> dict[str, Delta]:
        """Each graph's net change, where this transaction only inserted and deleted triples
        in it (none for a graph replaced, dropped, or changed by a raw update; none past
        :data:`kg.derived.DELTA_LIMIT` triples)."""
        deltas: dict[str, Delta | None] = {}
        for op in self._ops:
            if isinstance(op, Data) and op.kind != "replace":
                delta = deltas.setdefault(op.graph.value, {})
                if delta is not None:
                    delta.update(dict.fromkeys(op.triples, op.kind == "insert"))
                    if len(delta) > DELTA_LIMIT:
                        deltas[op.graph.value] = None
            else:
                for graph in (op.graph,) if isinstance(op, Data) else self._touched:
                    deltas[graph.value] = None  # (a raw update: any graph it touches)
        for graph in self._dropped:
            deltas[graph.value] = None
        return {g: d for g, d in deltas.items() if d is not None}

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.commit()

