"""Snapshots of the user's own graphs, and ``kg undo``.

Before a transaction replaces or drops a user-owned graph (the reading state, the user's
reading list, the Zotero sync state, lineage decisions; see :data:`kg.graphs.USER_GRAPHS`)
it writes the content of *all* of them to a snapshot file, so that one ``kg undo`` puts
the user's whole state back as it was before that command. The last
:data:`SNAPSHOT_LIMIT` snapshots are kept:

- embedded store: in ``DIR/snapshots/`` next to the database;
- remote endpoint: in the per-user data directory, one folder per endpoint URL (its hash;
  ``endpoint.txt`` names the URL without credentials), because a SPARQL endpoint has no
  folder of ours;
- in-memory store: in a temporary folder that lives as long as the process.

A snapshot is an N-Quads file (gzip) with a JSON sidecar. It is written (to a temporary
name, then renamed) *before* the transaction commits and marked ``pending``; after the
commit it is marked ``kept``. If the process is killed in between, the next writer
resolves it: kept when the transaction's activity is in the provenance graph (the commit
happened), removed otherwise. ``kg undo`` restores the newest kept snapshot, keeps the
state it replaces in ``snapshots/undone/`` (put it back with ``kg restore FILE``) and
removes the snapshot it used (:mod:`kg.undo`).

This module names the store only by what it reads of it (:class:`SnapshotStore`): the
store's transactions call it (:meth:`kg.store.base.Transaction.commit`), so it cannot
import them back.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import hashlib
import io
import json
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from glob import escape as glob_escape
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol, cast

import pyoxigraph as ox

from kg import scratch
from kg.graphs import PROVENANCE, USER_GRAPHS, graph_name
from kg.pauses import pause_point
from kg.store.provenance import Activity, lines_hash

if TYPE_CHECKING:
    from kg.results import Term

__all__ = [
    "SNAPSHOT_LIMIT",
    "Snapshot",
    "SnapshotStore",
    "Snapshots",
    "kept_before",
    "read_header",
    "read_quads",
    "snapshots_for",
    "user_hashes",
    "write_quads",
]

SNAPSHOT_LIMIT = 20


class SnapshotStore(Protocol):
    """What a snapshot reads of a store (every :class:`kg.store.base.GraphStore` has it):
    named without importing the store, whose transactions call this module."""

    @property
    def location(self) -> str: ...

    def triples(self, graph: ox.NamedNode | None = None) -> list[ox.Triple]: ...

    def dump(self, out: IO[bytes], *, fmt: ox.RdfFormat, graph: ox.NamedNode | None = None) -> None: ...

    def ask(self, sparql: str, bindings: Mapping[str, Term] | None = None) -> bool: ...
HEADER = "# techkg-snapshot"
_MEMORY_FOLDERS: dict[int, Path] = {}


@dataclass
class Snapshot:
    """One snapshot: the user's graphs as they were before ``command`` changed them."""

    id: str
    folder: Path
    created: str
    command: str
    activity: str
    graphs: dict[str, int] = field(default_factory=dict)
    state: str = "pending"  # pending -> kept; "undoing" while kg undo restores it
    undoer: str | None = None
    #: Each user graph's content hash right after the command, so that kg undo can tell
    #: whether anything changed them since.
    after: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.folder / f"{self.id}.nq.gz"

    @property
    def sidecar(self) -> Path:
        return self.folder / f"{self.id}.json"

    def save(self) -> None:
        tmp = self.folder / f"tmp-{uuid.uuid4().hex}.json"
        tmp.write_text(json.dumps({
            "id": self.id, "created": self.created, "command": self.command, "activity": self.activity,
            "graphs": self.graphs, "state": self.state, "undoer": self.undoer, "after": self.after,
        }, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.sidecar)

    def remove(self) -> None:
        for path in (self.path, self.sidecar):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def content(self) -> dict[ox.NamedNode, list[ox.Triple]]:
        """The graphs the snapshot holds (a graph that was empty is absent)."""
        return read_quads(self.path)

    def describe(self) -> str:
        return f"`{self.command}` at {self.created[:19].replace('T', ' ')} UTC"


class Snapshots:
    """The snapshot folder of one store."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def all(self) -> list[Snapshot]:
        """Every snapshot in the folder, newest first (pending ones included)."""
        out: list[Snapshot] = []
        if not self.folder.is_dir():
            return out
        for sidecar in self.folder.glob("*.json"):
            if sidecar.name.startswith("tmp-"):
                continue
            try:
                data = json.loads(sidecar.read_text(encoding="utf-8"))
                snap = Snapshot(id=data["id"], folder=self.folder, created=data["created"], command=data["command"],
                                activity=data["activity"], graphs=dict(data.get("graphs", {})),
                                state=data.get("state", "pending"), undoer=data.get("undoer"),
                                after=dict(data.get("after", {})))
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if snap.path.exists():
                out.append(snap)
        return sorted(out, key=lambda s: s.id, reverse=True)

    def kept(self) -> list[Snapshot]:
        return [s for s in self.all() if s.state == "kept"]

    def take(self, store: SnapshotStore, activity: Activity) -> Snapshot:
        """Write the user's graphs as they are now; the snapshot is pending until :meth:`keep`."""
        self.folder.mkdir(parents=True, exist_ok=True)
        now = dt.datetime.now(dt.UTC)
        snap = Snapshot(id=now.strftime("%Y%m%dT%H%M%S.%fZ") + "-" + uuid.uuid4().hex[:6], folder=self.folder,
                        created=now.isoformat(timespec="seconds"), command=activity.label,
                        activity=activity.iri.value)
        graphs = {g: graph_lines(store, g) for g in USER_GRAPHS}
        snap.graphs = {graph_name(g): lines.count(b"\n") for g, lines in graphs.items() if lines}
        write_quads(snap.path, graphs, header=f"{HEADER} command={activity.label!r} created={snap.created}")
        snap.save()
        return snap

    def keep(self, snap: Snapshot, store: SnapshotStore) -> None:
        """Mark ``snap`` kept once its command committed (and prune to the last 20)."""
        snap.state = "kept"
        snap.after = user_hashes(store)
        snap.save()
        for old in self.kept()[SNAPSHOT_LIMIT:]:
            old.remove()

    def resolve_pending(self, store: SnapshotStore) -> list[str]:
        """Settle snapshots left pending by a killed process; say what was done."""
        said = []
        if self.folder.is_dir():
            for leftover in [*self.folder.glob(".*.tmp"), *self.folder.glob("tmp-*.json")]:
                leftover.unlink(missing_ok=True)
        for snap in self.all():
            if snap.state == "pending":
                if _committed(store, snap.activity):
                    self.keep(snap, store)
                    said.append(f"kept the snapshot taken before {snap.describe()}, which completed")
                else:
                    snap.remove()
                    said.append(f"removed the snapshot of {snap.describe()}, which changed nothing")
            elif snap.state == "undoing" and snap.undoer:
                if _committed(store, snap.undoer):
                    snap.remove()
                    said.append(f"finished `kg undo` of {snap.describe()}")
                else:
                    snap.state, snap.undoer = "kept", None
                    snap.save()
                    said.append(f"`kg undo` of {snap.describe()} did not happen; its snapshot is kept")
        return said


@contextlib.contextmanager
def kept_before(store: SnapshotStore, activity: Activity, *, folder: Snapshots | None = None) -> Iterator[Snapshot]:
    """Snapshot the user's graphs, run the block (the one write that changes them), then
    keep the snapshot. If the block raises, the snapshot is removed: nothing changed."""
    snapshots = folder or snapshots_for(store)
    snapshots.resolve_pending(store)
    snap = snapshots.take(store, activity)
    pause_point("snapshot.taken")
    try:
        yield snap
    except BaseException:
        snap.remove()
        raise
    snapshots.keep(snap, store)


def snapshots_for(store: SnapshotStore) -> Snapshots:
    """The snapshot folder of ``store`` (see the module documentation for where)."""
    path = getattr(store, "path", None)
    if isinstance(path, Path):
        return Snapshots(path / "snapshots")
    if store.location == ":memory:":
        folder = _MEMORY_FOLDERS.get(id(store))
        if folder is None:
            folder = scratch.for_process("techkg-snapshots-")
            _MEMORY_FOLDERS[id(store)] = folder
        return Snapshots(folder)
    from platformdirs import user_data_path

    key = hashlib.sha256(store.location.encode()).hexdigest()[:16]
    folder = user_data_path("techkg", appauthor=False) / "snapshots" / key
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "endpoint.txt").write_text(store.location + "\n", encoding="utf-8")
    return Snapshots(folder)


def _committed(store: SnapshotStore, activity: str) -> bool:
    return store.ask(f"ASK {{ GRAPH {PROVENANCE} {{ <{activity}> a prov:Activity }} }}")


# -- N-Quads files ---------------------------------------------------------------------


#: The last line of a file that :func:`write_quads` wrote with ``end``: the SHA-256 of every
#: byte between the header line and this line.
END_LINE = "# techkg-end sha256="


#: A graph's content to write: its triples, or its N-Triples lines as Oxigraph writes them
#: (:func:`graph_lines`).
GraphContent = Sequence[ox.Triple] | bytes


def graph_lines(store: SnapshotStore, graph: ox.NamedNode) -> bytes:
    """``graph``'s triples as N-Triples lines, written by the store (Oxigraph's writer, with
    no Python object per triple: a snapshot of 800,000 triples costs seconds less)."""
    out = io.BytesIO()
    store.dump(out, fmt=ox.RdfFormat.N_TRIPLES, graph=graph)
    return out.getvalue()


def _nquads(graph: ox.NamedNode, content: GraphContent) -> tuple[bytes, int]:
    """``content`` as N-Quads lines in ``graph``, and how many."""
    if isinstance(content, bytes):
        # An N-Triples line ends in " .\n" and holds no other newline (literals escape theirs).
        return content.replace(b" .\n", f" {graph} .\n".encode()), content.count(b"\n")
    lines = ox.serialize([ox.Quad(t.subject, t.predicate, t.object, graph) for t in content],
                         format=ox.RdfFormat.N_QUADS) or b""
    return lines, len(content)


def write_quads(path: Path, graphs: Mapping[ox.NamedNode, GraphContent], *, header: str, end: bool = False) -> int:
    """Write ``graphs`` as gzipped N-Quads to ``path``, atomically (temporary file, fsync,
    rename): a killed process leaves the old file or none, never half of one. The temporary
    file is named with the writer's pid, so that the next write to ``path`` removes one a
    killed writer left behind (and never one that a live writer is still writing). With
    ``end``, the file ends with :data:`END_LINE` and the checksum of its quads."""
    _remove_left_behind(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
    try:
        with tmp.open("wb") as raw:
            count = write_quads_to(raw, graphs, header=header, end=end)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return count


def write_quads_to(raw: IO[bytes], graphs: Mapping[ox.NamedNode, GraphContent], *, header: str,
                   end: bool = False) -> int:
    """Write ``graphs`` as gzipped N-Quads to the binary stream ``raw`` (see :func:`write_quads`)."""
    import hashlib

    count = 0
    digest = hashlib.sha256()
    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as out:
        out.write((header + "\n").encode())
        for graph, content in graphs.items():
            if content:
                lines, n = _nquads(graph, content)
                digest.update(lines)
                out.write(lines)
                count += n
                pause_point("quads.writing")
        if end:
            out.write(f"{END_LINE}{digest.hexdigest()}\n".encode())
    return count


def _remove_left_behind(path: Path) -> None:
    from kg.store.folder import pid_alive

    for tmp in path.parent.glob(f".{glob_escape(path.name)}.*-*.tmp"):
        pid = tmp.name[len(path.name) + 2:].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            with contextlib.suppress(OSError):
                tmp.unlink()


def open_binary(path: Path) -> IO[bytes]:
    """``path``, decompressed if it is gzipped, within :mod:`kg.inputlimits`' bound."""
    from kg.inputlimits import LimitedReader, decompressed_limit

    if path.suffix != ".gz":
        return path.open("rb")
    return cast(IO[bytes], LimitedReader(cast(IO[bytes], gzip.open(path, "rb")), decompressed_limit(path), path))


def read_header(path: Path) -> str:
    try:
        with open_binary(path) as fh:
            first = fh.readline().decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        return ""
    return first.strip() if first.startswith("#") else ""


def read_quads(path: Path) -> dict[ox.NamedNode, list[ox.Triple]]:
    """The named graphs of an N-Quads file (gzipped or not); triples in the default graph
    are refused: every TechKG graph is named."""
    from kg.errors import RDFImportError

    graphs: dict[ox.NamedNode, list[ox.Triple]] = {}
    try:
        with open_binary(path) as fh:
            for quad in ox.parse(fh, format=ox.RdfFormat.N_QUADS):
                if not isinstance(quad.graph_name, ox.NamedNode):
                    raise RDFImportError("it holds triples outside any named graph", path=str(path),
                                         hint="A TechKG backup names the graph of every triple (N-Quads).")
                graphs.setdefault(quad.graph_name, []).append(ox.Triple(quad.subject, quad.predicate, quad.object))
    except MemoryError as exc:
        from kg.inputlimits import parser_gave_up

        raise parser_gave_up(path, exc) from None
    except (SyntaxError, ValueError, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise RDFImportError(f"it is not a readable N-Quads file: {exc}", path=str(path),
                             hint="Give a file written by kg backup (FILE.nq.gz) or a snapshot.") from None
    return graphs


def user_hashes(store: SnapshotStore) -> dict[str, str]:
    """Each user graph → a hash of its content."""
    return {g.value: lines_hash(graph_lines(store, g)) for g in USER_GRAPHS}
