"""The folder of an embedded store: what makes a directory a TechKG store, the writer's
lock and who holds it, and the read-only views that readers open.

Layout of a store directory::

    DIR/                 RocksDB's own files (CURRENT, MANIFEST-*, *.sst, *.log, LOCK, ...)
    DIR/techkg-store.json  marks the directory as a TechKG store (format, creation time)
    DIR/write.lock       the writers' lock (flock); DIR/writer.json says who holds it
    DIR/readers/         read-only views: RocksDB checkpoints, one per published state
    DIR/snapshots/       copies of user-owned graphs taken before a command replaced them
    DIR/imports/         work folders of graph replacements (journalled diffs; kg.store.bulk)
    DIR/transactions/    work folders of large transactions (journalled; kg.store.bulkwrite)
    DIR/copies/          import copies: each wholly loaded graph as N-Triples (kg.store.copies)
    DIR/serve.json       written by ``kg serve`` while it runs

**Why views.** pyoxigraph 0.5 offers ``Store.read_only(path)``, whose documentation says
that opening a store read-only while another process writes it is undefined behaviour
(RocksDB's read-only mode replays the primary's write-ahead log and lazily opens table
files that the primary's compactions may delete under it); ``Store.secondary`` of 0.4 is
gone from 0.5. A checkpoint (``Store.backup``: hard links to the immutable table files,
plus a copy of the manifest and log) is a complete database that no process ever writes,
so opening *it* read-only is well defined. Every write publishes a fresh view (a few
milliseconds for the built graph: hard links), and readers open the newest one. Readers
never take the writers' lock, so they are never blocked and never block a writer.

A view stays on disk while a reader holds a shared lock on its lease file; old views
nobody reads are removed when the next one is published. A view published for a
compaction alone (kg.store.compaction) holds the same state as the one before it, and says
so (``<view>.state``): what was found fresh for that state (the analytics tables, the
search index) stays fresh. ``STALE`` in ``readers/`` says
that the primary may hold a committed write that no view shows yet (a writer was killed
between its commit and its publication): the next process that can take the writers'
lock publishes a view first.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import shutil
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kg.errors import StoreError, StoreLockedError

__all__ = [
    "MARKER",
    "Holder",
    "ReaderLease",
    "StoreFolder",
    "WriterLock",
    "pid_alive",
    "write_json_atomically",
]

MARKER = "techkg-store.json"
FORMAT = 1
LOCK_FILE = "write.lock"
HOLDER_FILE = "writer.json"
READERS = "readers"
SNAPSHOTS = "snapshots"
SERVE_FILE = "serve.json"
_CURRENT = "CURRENT"
#: RocksDB info logs kept beside the current one (see StoreFolder.prune_info_logs).
INFO_LOGS_KEPT = 3
_STALE = "STALE"
#: Files and folders of ours that may sit in a store directory next to RocksDB's.
PENDING_FILE = "pending.json"
#: Work folders of graph replacements (kg.store.bulk.WORK_FOLDER).
IMPORTS = "imports"
#: Work folders of large transactions (kg.store.bulkwrite.WORK_FOLDER).
TRANSACTIONS = "transactions"
#: Import copies (kg.store.copies.COPIES).
COPIES = "copies"
#: What the writers have written since the store was last compacted (kg.store.compaction).
COMPACTION = "compaction.json"
OWN_NAMES = frozenset({MARKER, LOCK_FILE, HOLDER_FILE, READERS, SNAPSHOTS, SERVE_FILE, PENDING_FILE,
                       "validation.json", IMPORTS, TRANSACTIONS, COPIES, COMPACTION})
#: The holder of the writers' lock that gives it up to any writer that wants it: the
#: background compaction (kg.store.compaction), stopped with SIGTERM.
YIELDING = "kg (compacting the store in the background)"


def _is_rocksdb_dir(path: Path) -> bool:
    return (path / "CURRENT").is_file() and any(path.glob("MANIFEST-*"))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_json_atomically(path: Path, data: dict[str, object]) -> None:
    """Write ``data`` to ``path`` as JSON, whole or not at all (a new file moved over it)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) the writers' lock, from ``writer.json``."""

    pid: int
    command: str
    started: str

    @property
    def alive(self) -> bool:
        return pid_alive(self.pid)

    def describe(self) -> str:
        return f"`{self.command}` (pid {self.pid}, since {self.started})"

    @classmethod
    def read(cls, path: Path) -> Holder | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(int(data["pid"]), str(data["command"]), str(data["started"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None


class StoreFolder:
    """The directory of one embedded store."""

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- what the directory is ------------------------------------------------------

    def is_store(self) -> bool:
        return (self.path / MARKER).is_file() or _is_rocksdb_dir(self.path)

    def prepare(self, *, create_parents: bool = False) -> None:
        """Make sure ``path`` is a TechKG store, creating one in a missing or empty
        directory. A directory that holds anything else is refused: TechKG never writes
        its database files among a user's own files."""
        path = self.path
        self.refuse_nested()
        if path.exists() and not path.is_dir():
            raise StoreError(f"--store {path} is a file, not a directory",
                             hint="Point --store (or KG_STORE) at a directory: an existing store, "
                             "an empty directory or a new one.")
        if path.is_dir():
            if self.is_store():
                if not (path / MARKER).exists():  # a store made before the marker existed
                    self._write_marker()
                return
            others = sorted(p.name for p in path.iterdir() if p.name not in OWN_NAMES)
            if others:
                shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
                raise StoreError(
                    f"{path} is not a TechKG store: it already holds other files ({shown})",
                    hint="Point --store (or KG_STORE) at an existing store, an empty directory or a new "
                    f"one, e.g. --store {path / 'techkg-store'}.",
                )
        else:
            if not path.parent.is_dir() and not create_parents:
                raise StoreError(
                    f"cannot create the store {path}: its parent directory {path.parent} does not exist",
                    hint="Create the parent directory first, or point --store at an existing directory.",
                )
            try:
                path.mkdir(parents=create_parents, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the store directory {path}: {exc.strerror}") from exc
        self._write_marker()

    def refuse_nested(self) -> None:
        """Refuse a directory inside another TechKG store (``--store STORE/snapshots``)."""
        outer = next((p for p in self.path.absolute().parents if (p / MARKER).is_file()), None)
        if outer is not None:
            raise StoreError(
                f"{self.path} is inside the TechKG store {outer}: a store cannot hold another store",
                hint=f"Point --store (or KG_STORE) at {outer} itself, or at a directory outside it.")

    def _write_marker(self) -> None:
        from kg.version import __version__

        try:
            write_json_atomically(self.path / MARKER, {
                "format": FORMAT, "techkg": __version__,
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            })
        except OSError as exc:
            raise StoreError(f"cannot write to the store directory {self.path}: {exc.strerror}") from exc

    # -- the writers' lock ----------------------------------------------------------

    def holder(self) -> Holder | None:
        return Holder.read(self.path / HOLDER_FILE)

    def lock(self, *, command: str, wait: float, on_wait: Callable[[str], None] | None = None) -> WriterLock:
        """Take the writers' lock, waiting up to ``wait`` seconds for another writer."""
        fh = (self.path / LOCK_FILE).open("a+b")
        deadline = time.monotonic() + max(0.0, wait)
        told = stopped = False
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = self.holder()
                if (holder is not None and holder.command == YIELDING != command and not stopped and holder.alive):
                    # RocksDB installs a compaction's files only once it is complete: one
                    # stopped halfway leaves the store as it was.
                    with contextlib.suppress(OSError):
                        os.kill(holder.pid, signal.SIGTERM)
                    stopped = True
                    deadline = max(deadline, time.monotonic() + 5.0)
                    continue
                if time.monotonic() >= deadline:
                    fh.close()
                    raise StoreLockedError(self._locked_message(holder, wait), hint=self.locked_hint()) from None
                if not told and not stopped and on_wait is not None:
                    who = holder.describe() if holder and holder.alive else "another process"
                    on_wait(f"waiting up to {wait:g} s for {who} to finish writing to {self.path}")
                    told = True
                time.sleep(0.05)
        previous = self.holder()  # still there: the last writer did not finish cleanly
        if previous is not None and previous.command == YIELDING:
            previous = None  # a compaction stopped for this writer: nothing to recover
        me = Holder(os.getpid(), command, dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        write_json_atomically(self.path / HOLDER_FILE, {"pid": me.pid, "command": me.command,
                                                         "started": me.started})
        return WriterLock(self, fh, interrupted=previous)

    def try_lock(self, *, command: str) -> WriterLock | None:
        try:
            return self.lock(command=command, wait=0.0)
        except StoreLockedError:
            return None

    def _locked_message(self, holder: Holder | None, wait: float) -> str:
        waited = f" (waited {wait:g} s)" if wait > 0 else ""
        if holder is not None and holder.alive:
            return f"the store at {self.path} is in use by {holder.describe()}{waited}"
        return f"the store at {self.path} is in use by another process{waited}"

    def locked_hint(self) -> str:
        serve = self.path / SERVE_FILE
        if serve.exists():
            try:
                info = json.loads(serve.read_text())
                url, pid = info["sparql"], int(info["pid"])
                if pid_alive(pid):
                    return (
                        f"`kg serve` (pid {pid}) holds it. Run the command against its "
                        f"endpoint instead: kg --store {url} ..., or stop the server first."
                    )
                # else: a server that was killed left its serve.json behind; it names nobody.
            except (OSError, ValueError, KeyError, TypeError):
                pass
        return ("Wait for the other kg command to finish (or give it longer with --wait SECONDS), stop the "
                "`kg serve` that holds it, or use another store with --store DIR (or KG_STORE). Commands "
                "that only read (show, stats, query, export, ...) work meanwhile.")

    # -- RocksDB's info log --------------------------------------------------------------

    def prune_info_logs(self, keep: int = INFO_LOGS_KEPT) -> int:
        """Remove all but the newest ``keep`` of RocksDB's old info logs (``LOG.old.*``).

        RocksDB starts a new info log (``LOG``) each time the store is opened and keeps
        the old ones, about 137 KB each: every command that writes would leave one behind
        (116 MB after 1,000 steps). pyoxigraph 0.5 passes no RocksDB options
        (``keep_log_file_num``, ``max_log_file_size``), so the writer prunes them as it opens
        the store. Returns how many it removed."""
        old = sorted(self.path.glob("LOG.old.*"), key=lambda p: p.name)
        removed = 0
        for log in old[: max(0, len(old) - keep)]:
            with contextlib.suppress(OSError):
                log.unlink()
                removed += 1
        return removed

    # -- the journal of unfinished work ------------------------------------------------

    def begin(self, intent: dict[str, object]) -> None:
        """Record what recovery must undo if this process dies before :meth:`end`."""
        write_json_atomically(self.path / PENDING_FILE, intent)

    def end(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.path / PENDING_FILE).unlink()

    def pending(self) -> dict[str, object] | None:
        try:
            data = json.loads((self.path / PENDING_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    # -- reader views ----------------------------------------------------------------

    @property
    def readers(self) -> Path:
        return self.path / READERS

    def current_view(self) -> str | None:
        try:
            name = (self.readers / _CURRENT).read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return name if name and (self.readers / name).is_dir() else None

    def state_of(self, view: str) -> str:
        """The name of the state ``view`` holds: the first view that held it."""
        try:
            return (self.readers / f"{view}.state").read_text(encoding="utf-8").strip() or view
        except OSError:
            return view

    def current_state(self) -> str | None:
        """The state of the current view (:meth:`state_of`), or None when there is no view."""
        view = self.current_view()
        return None if view is None else self.state_of(view)

    def views_stale(self) -> bool:
        return (self.readers / _STALE).exists() or self.current_view() is None

    def mark_stale(self) -> None:
        self.readers.mkdir(exist_ok=True)
        (self.readers / _STALE).touch()

    def publish_view(self, checkpoint: Callable[[Path], None], *, same_state: bool = False) -> str:
        """Write a checkpoint of the primary with ``checkpoint(target)`` and make it the view
        readers open; remove older views that no reader holds. ``same_state``: nothing was
        written since the current view, which the new one stands in for (a compaction)."""
        self.readers.mkdir(exist_ok=True)
        state = self.current_state() if same_state and not self.views_stale() else None
        name = f"view-{time.time_ns():020d}"
        tmp = self.readers / f"tmp-{uuid.uuid4().hex}"
        checkpoint(tmp)
        if state is not None:
            (self.readers / f"{name}.state").write_text(state + "\n", encoding="utf-8")
        (self.readers / f"{name}.lease").touch()
        os.replace(tmp, self.readers / name)
        current = self.readers / _CURRENT
        tmp_current = self.readers / f"tmp-{uuid.uuid4().hex}"
        tmp_current.write_text(name + "\n", encoding="utf-8")
        os.replace(tmp_current, current)
        with contextlib.suppress(FileNotFoundError):
            (self.readers / _STALE).unlink()
        self.collect_views(keep=name)
        return name

    def collect_views(self, *, keep: str | None = None) -> None:
        """Remove views no reader holds (and leftovers of interrupted publications)."""
        keep = keep or self.current_view()
        if not self.readers.is_dir():
            return
        for entry in self.readers.iterdir():
            if entry.name.startswith("tmp-"):
                if entry.is_dir():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        entry.unlink()
            elif entry.name.startswith("view-") and entry.is_dir() and entry.name != keep:
                lease = self.readers / f"{entry.name}.lease"
                try:
                    with lease.open("a+b") as fh:
                        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                        shutil.rmtree(entry, ignore_errors=True)
                        lease.unlink()
                        (self.readers / f"{entry.name}.state").unlink(missing_ok=True)
                except BlockingIOError:
                    continue  # a reader still uses it
                except OSError:
                    continue
            elif (entry.name.endswith((".lease", ".state"))
                  and not (self.readers / entry.name.rsplit(".", 1)[0]).exists()):
                with contextlib.suppress(OSError):
                    entry.unlink()

    def lease_view(self) -> ReaderLease | None:
        """A shared lease on the current view, or None when there is none to lease."""
        for _ in range(50):
            name = self.current_view()
            if name is None:
                return None
            try:
                fh = (self.readers / f"{name}.lease").open("rb")
            except FileNotFoundError:
                continue  # collected between reading CURRENT and opening its lease
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                time.sleep(0.01)
                continue
            if (self.readers / name).is_dir():
                return ReaderLease(self.readers / name, fh)
            fh.close()
        return None


class WriterLock:
    """The writers' lock, held until :meth:`release`."""

    def __init__(self, folder: StoreFolder, fh: IO[bytes], *, interrupted: Holder | None) -> None:
        self.folder = folder
        self._fh: IO[bytes] | None = fh
        #: The previous holder, when it was interrupted before it released the lock.
        self.interrupted = interrupted

    def release(self) -> None:
        if self._fh is None:
            return
        with contextlib.suppress(FileNotFoundError):
            (self.folder.path / HOLDER_FILE).unlink()
        fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        self._fh.close()
        self._fh = None


class ReaderLease:
    """A shared lock on one view's lease file: the view stays on disk while it is held."""

    def __init__(self, view: Path, fh: IO[bytes]) -> None:
        self.view = view
        self._fh: IO[bytes] | None = fh

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
