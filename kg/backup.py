"""``kg backup`` and ``kg restore``: every named graph, provenance included, as one
gzipped N-Quads file, and back.

A backup starts with a ``# techkg-backup`` comment line. Restoring one makes the store
hold exactly what the backup holds (graphs it lacks are dropped), in one atomic write, with
the provenance it had: restored into an empty store, it gives the same store, apart from
one record of the restore itself in the provenance graph. Any other N-Quads file (a
snapshot, ``kg export rdf --format nquads``) replaces only the graphs it holds, and those
graphs record the restore as their last change.

Writing a backup never touches the store, and the file appears whole or not at all
(temporary file, fsync, rename). A restore into a store that holds anything asks first
and keeps a snapshot of the user's graphs, so ``kg undo`` puts them back.
"""

from __future__ import annotations

import datetime as dt
import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from kg import __version__
from kg.errors import ExportError, KGError
from kg.graphs import PROVENANCE, USER_GRAPHS, graph_name
from kg.snapshots import kept_before, read_header, read_quads, write_quads
from kg.store.base import Activity, GraphStore

__all__ = ["BACKUP_HEADER", "BackupReport", "RestoreReport", "backup", "restore"]

BACKUP_HEADER = "# techkg-backup"
_STAGING = "urn:techkg:staging:"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class BackupReport:
    path: str
    graphs: dict[str, int]

    @property
    def triples(self) -> int:
        return sum(self.graphs.values())


def backup(store: GraphStore, target: Path | BinaryIO, *, force: bool = False) -> BackupReport:
    """Write every named graph of ``store`` to ``target`` (gzipped N-Quads): a file, or a
    binary stream (``kg backup -o -`` writes to standard output)."""
    if not isinstance(target, Path):
        return _backup_to(store, target)
    if target.exists() and not force:
        raise ExportError(f"{target} exists", hint="Pass --force to replace it, or choose another file name.")
    if not target.parent.is_dir():
        raise ExportError(f"cannot write {target}: the directory {target.parent} does not exist")
    graphs, header = _graphs_and_header(store)
    try:
        write_quads(target, graphs, header=header)
    except OSError as exc:
        raise ExportError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return BackupReport(str(target), {graph_name(g): len(t) for g, t in graphs.items()})


def _graphs_and_header(store: GraphStore) -> tuple[dict[ox.NamedNode, list[ox.Triple]], str]:
    """Every graph's triples and the backup's first line. A server's URL says which store it
    was; an embedded store's folder would only tie the file to this machine (kg.sources)."""
    graphs = {g: store.triples(g) for g in store.named_graphs() if not g.value.startswith(_STAGING)}
    created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    where = store.location if "://" in str(store.location) else "embedded"
    header = (f"{BACKUP_HEADER} techkg={__version__} created={created} store={where} "
              f"graphs={len(graphs)} triples={sum(len(t) for t in graphs.values())}")
    return graphs, header


def _backup_to(store: GraphStore, stream: BinaryIO) -> BackupReport:
    """The backup as gzipped N-Quads on ``stream``, graph by graph as they are read."""
    graphs, header = _graphs_and_header(store)
    try:
        with gzip.GzipFile(fileobj=stream, mode="wb", compresslevel=6, mtime=0) as out:
            out.write((header + "\n").encode())
            for graph, triples in graphs.items():
                out.write(ox.serialize([ox.Quad(t.subject, t.predicate, t.object, graph) for t in triples],
                                       format=ox.RdfFormat.N_QUADS) or b"")
        stream.flush()
    except OSError as exc:
        raise ExportError(f"cannot write the backup: {exc.strerror or exc}") from exc
    return BackupReport("-", {graph_name(g): len(t) for g, t in graphs.items()})


@dataclass
class RestoreReport:
    path: str
    whole: bool
    graphs: dict[str, int]
    dropped: list[str] = field(default_factory=list)
    snapshot: str | None = None


def restore(store: GraphStore, source: Path, *, yes: bool = False) -> RestoreReport:
    """Make ``store`` hold what ``source`` holds (see the module documentation)."""
    if not source.is_file():
        raise KGError(f"{source}: no such file", hint="Give a file written by kg backup -o FILE.nq.gz.")
    whole = read_header(source).startswith(BACKUP_HEADER)
    content = read_quads(source)  # a broken file raises here, before anything is written
    if not content:
        raise KGError(f"{source} holds no triples", hint="Give a file written by kg backup -o FILE.nq.gz.")
    current = [g for g in store.named_graphs() if not g.value.startswith(_STAGING)]
    replaced = current if whole else [g for g in current if g in content]
    if replaced and not yes:
        names = ", ".join(graph_name(g) for g in replaced[:8]) + (" ..." if len(replaced) > 8 else "")
        raise KGError(
            f"the store already holds graphs that the restore would replace: {names}",
            hint="Pass --yes to restore anyway: a snapshot of your own graphs is kept first, "
            "and kg undo puts them back.",
        )
    activity = Activity("kg restore", used=[str(source)])
    report = RestoreReport(str(source), whole, {graph_name(g): len(t) for g, t in content.items()})
    touches_user = any(g in USER_GRAPHS for g in [*replaced, *content])
    if whole:
        drop = [g for g in current if g not in content]
        report.dropped = [graph_name(g) for g in drop]
        activity.stats.update(graphs=len(content), triples=sum(len(t) for t in content.values()))
        record = "\n".join(f"{t.subject} {t.predicate} {t.object} ." for t in activity.triples(_now()))
        then = f"INSERT DATA {{ GRAPH {PROVENANCE} {{\n{record}\n}} }}"
        if touches_user and any(store.count(g) for g in USER_GRAPHS):
            with kept_before(store, activity) as snap:
                store.replace_graphs(content, drop=drop, then=then)
                report.snapshot = str(snap.path)
        else:
            store.replace_graphs(content, drop=drop, then=then)
        return report
    with store.transaction(activity) as tx:
        for graph, triples in content.items():
            if graph != PROVENANCE:
                tx.replace_graph(graph, triples, sources=[str(source)])
    if tx.snapshot_taken is not None:
        report.snapshot = str(tx.snapshot_taken.path)
    return report
