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

A backup checks itself. Its header states how many graphs and triples it holds and that it
ends with a checksum line (``checksum=sha256``); its last line is the SHA-256 of every quad
line (:data:`kg.store.snapshots.END_LINE`). Before anything is replaced, a restore reads the whole
file and refuses one whose checksum line is missing (cut short, even at a line boundary),
whose quads do not match the checksum (changed), or whose graphs and triples disagree with
its header: the store is left as it was. A backup written before the checksum existed
(TechKG 0.x without ``checksum=`` in its header) has its counts checked, and is restored only
with ``unchecked`` (``kg restore --unchecked``), since a change that keeps the counts cannot
be seen in it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from kg.errors import ExportError, KGError
from kg.graphs import PROVENANCE, USER_GRAPHS, graph_name
from kg.store.base import Activity, GraphStore
from kg.store.snapshots import END_LINE, kept_before, open_binary, read_header, read_quads, write_quads, write_quads_to
from kg.version import __version__

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
        write_quads(target, graphs, header=header, end=True)
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
              f"graphs={len(graphs)} triples={sum(len(t) for t in graphs.values())} checksum=sha256")
    return graphs, header


def _backup_to(store: GraphStore, stream: BinaryIO) -> BackupReport:
    """The backup as gzipped N-Quads on ``stream``, graph by graph as they are read."""
    graphs, header = _graphs_and_header(store)
    try:
        write_quads_to(stream, graphs, header=header, end=True)
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


def _stated(header: str, key: str) -> int | None:
    found = re.search(rf"(?:^|\s){key}=(\d+)(?:\s|$)", header)
    return int(found.group(1)) if found else None


def _check_checksum(source: Path, header: str, *, unchecked: bool) -> None:
    """Refuse a backup whose last line is not the checksum of its quads (see the module
    documentation); one written before checksums, unless ``unchecked``."""
    if "checksum=sha256" not in header.split():
        if unchecked:
            return
        version = re.search(r"techkg=(\S+)", header)
        raise KGError(
            f"{source} was written by a kg backup without a checksum"
            + (f" (TechKG {version.group(1)})" if version else "")
            + ", so a copy cut short or changed since cannot be told from a whole one",
            hint="Its graph and triple counts are still checked against its header. To restore it anyway, "
            "pass --unchecked; then write a new backup (kg backup -o FILE.nq.gz), which carries a checksum.")
    digest = hashlib.sha256()
    stated: str | None = None
    with open_binary(source) as fh:
        fh.readline()  # the header
        for line in fh:
            if stated is not None:  # anything after the checksum line
                stated = ""
                break
            if line.startswith(END_LINE.encode()):
                stated = line.decode("ascii", "replace").removeprefix(END_LINE).strip()
                continue
            digest.update(line)
    if stated is None:
        raise KGError(f"{source} ends before its checksum line: the copy was cut short",
                      hint="Nothing was changed in the store. Restore from a whole copy of the backup.")
    if stated != digest.hexdigest():
        raise KGError(f"{source} does not match the checksum kg backup wrote into it: it was changed since",
                      hint="Nothing was changed in the store. Restore from an unchanged copy of the backup.")


def _check_counts(source: Path, header: str, content: dict[ox.NamedNode, list[ox.Triple]]) -> None:
    graphs, triples = _stated(header, "graphs"), _stated(header, "triples")
    held = (len(content), sum(len(t) for t in content.values()))
    if graphs is None or triples is None or (graphs, triples) != held:
        said = f"{graphs} graphs and {triples} triples" if graphs is not None and triples is not None else "no counts"
        raise KGError(f"{source} holds {held[0]} graphs and {held[1]} triples, but its header states {said}",
                      hint="Nothing was changed in the store. The backup was cut short or changed; restore from "
                      "a whole, unchanged copy.")


def restore(store: GraphStore, source: Path, *, yes: bool = False, unchecked: bool = False) -> RestoreReport:
    """Make ``store`` hold what ``source`` holds (see the module documentation). A backup is
    checked whole (checksum, counts) before anything is written; ``unchecked`` lets one
    written before checksums through."""
    if not source.is_file():
        raise KGError(f"{source}: no such file", hint="Give a file written by kg backup -o FILE.nq.gz.")
    header = read_header(source)
    whole = header.startswith(BACKUP_HEADER)
    if whole:
        _check_checksum(source, header, unchecked=unchecked)
    content = read_quads(source)  # a broken file raises here, before anything is written
    if whole:
        _check_counts(source, header, content)
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
