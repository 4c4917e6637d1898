"""Bulk import into the embedded store at the loader's speed, crash-safe.

Two paths, both used by :meth:`kg.store.embedded.OxigraphStore.load_file`:

- **A first load** (the target graph is empty, and the file's syntax cannot name graphs:
  :data:`TRIPLES_ONLY`) hands Oxigraph's bulk loader the file's
  path (a stream, for a gzipped file). The provenance it records, the file's digest and
  the number of distinct triples, is computed by :class:`FileFacts` in a thread that
  reads the file beside the loader (which works without the GIL): no second pass after
  the load, and no COUNT over the loaded graph. The same thread writes the graph's
  import copy (:mod:`kg.store.copies`).
- **A replacement** (the graph holds data, or the file may name graphs, whose statements
  are all folded into the one graph) never holds both graphs in one transaction.
  The old graph is read from its import copy (or, without one, dumped) while the new
  file is normalised to N-Triples, in the store's own form, in a work folder; DuckDB
  diffs the two (set difference, spilling to disk, in bounded memory), and only
  the difference is applied: removed triples in bounded batches while the bulk loader adds
  the new ones beside them (the two sets are disjoint). Re-importing a refreshed dump
  costs what changed, not the whole graph. The normalised new content becomes the
  graph's import copy once the replacement committed.

Crash safety of a replacement: nothing touches the store until the work folder holds
the diff and a journal (``journal.json``, written atomically). From then on applying the
diff is idempotent (what is removed and what is added are disjoint; blank nodes keep
the ids the journal gave them), and a process killed half-way has it finished by the next open of
the store (:func:`resume`). A kill before the journal leaves the old graph untouched;
after it, the next open completes the new one: the graph is always the old or the new.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import pyoxigraph as ox

from kg.derived import DELTA_LIMIT, Delta
from kg.graphs import PROVENANCE
from kg.passthrough import PassThroughReader
from kg.pauses import pause_point
from kg.store.copies import canonical_lines, canonical_triples, fsync

if TYPE_CHECKING:
    import duckdb

    from kg.store.base import Progress

__all__ = ["Background", "Diff", "FileFacts", "TRIPLES_ONLY", "WORK_FOLDER", "apply", "diff", "folds_graphs",
           "load_source", "open_rdf", "pending", "remove_lines", "resume", "work_folder"]

#: Where replacements keep their work, inside the store's directory.
WORK_FOLDER = "imports"
JOURNAL = "journal.json"
#: Triples removed per ``DELETE DATA``. Measured at 700k papers (10M quads), removing
#: 196k shuffled triples, each figure against a bulk load of the same triples in the same
#: run: batches of 1,000 cost 2.6x the load per triple, 5,000 cost 4.7x (the transaction's
#: indexed write batch grows worse than linearly), one ``Store.remove`` a triple 4.1x,
#: and ``clear_graph`` of a whole graph 2.7x (holding it all in memory). Beside the
#: bulk loader, in a whole replacement, 1,000 and 5,000 both took about 225 s for 768k.
DELETE_BATCH = 1_000
#: Removals between two flushes of the memtables. Every removal writes a tombstone in six
#: indexes' memtables, whose skip lists get slower to insert into as they grow (cache
#: misses): removing 768k triples at 700k papers went from 12 µs a triple for the first
#: 100k to 30 µs for the last, 18 s in all; flushed every 50k, 9 s. In a whole replacement
#: of that graph just after its first load, the step of 100k took it from 23 s to 18 s. A
#: flush waits while level 0 is as full as RocksDB lets it get (the compaction of a large
#: bulk load still to run: after a 9M-triple import, the fifth flush waited 9 s), so one
#: that took :data:`FLUSH_WAITED` seconds or more ends the flushing for that removal.
FLUSH_EVERY = 100_000
FLUSH_WAITED = 2.0
#: Bytes read at a time by the thread that hashes and counts a file beside the loader.
BLOCK = 1 << 22
_MB = 1 << 20
_LINE_FORMATS = (ox.RdfFormat.N_TRIPLES,)
#: The syntaxes that cannot name a graph: only these go straight to the bulk loader (whose
#: ``to_graph`` moves the default graph alone). Every other syntax (N-Quads, TriG, JSON-LD,
#: N3 with its formulas, and any that pyoxigraph adds) is read statement by statement and
#: each statement folded into the import graph, whatever graph the file names.
TRIPLES_ONLY = frozenset({ox.RdfFormat.N_TRIPLES, ox.RdfFormat.TURTLE, ox.RdfFormat.RDF_XML})


def folds_graphs(fmt: ox.RdfFormat) -> bool:
    """Whether a file in ``fmt`` may name graphs, and so must be folded (:func:`diff`)."""
    return fmt not in TRIPLES_ONLY
#: DuckDB reads and writes N-Triples as one text column: a separator that Oxigraph's
#: serialiser always escapes, and no quoting.
_CSV = "header = false, delim = '\\x01', quote = '', escape = '', auto_detect = false"


def open_rdf(path: Path, gzipped: bool, fmt: ox.RdfFormat | None = None) -> IO[bytes]:
    """The file's bytes (decompressed); given its syntax ``fmt``, within the limits of
    :mod:`kg.inputlimits` (decompressed size, longest literal)."""
    stream = cast(IO[bytes], gzip.open(path, "rb")) if gzipped else path.open("rb")
    if fmt is None:
        return stream
    from kg.inputlimits import guarded

    return guarded(stream, path, fmt.name, compressed=gzipped)


@contextlib.contextmanager
def load_source(path: Path, gzipped: bool, fmt: ox.RdfFormat) -> Iterator[dict[str, Any]]:
    """What the bulk loader reads ``path`` from, as its keyword: the path itself for a plain
    N-Triples file where the limit on one literal is pyoxigraph's own (its parser stops at
    16 MiB for one token, and :func:`kg.inputlimits.parser_gave_up` says so), else the
    stream :func:`open_rdf` guards. Read through Python, the loader waits for the GIL that
    :class:`FileFacts` holds beside it: 1.5 s of 10 at 100k papers."""
    from kg.inputlimits import LITERAL_MIB, literal_limit

    if not gzipped and fmt == ox.RdfFormat.N_TRIPLES and literal_limit() >= LITERAL_MIB * _MB:
        yield {"path": str(path)}
        return
    with open_rdf(path, gzipped, fmt) as stream:
        yield {"input": stream}


class FileFacts(threading.Thread):
    """The SHA-256 of a file's bytes and how many distinct triples it states, worked out
    in a thread of their own while the loader reads the same file (from the page cache),
    at the lowest priority: in the cores the loader leaves idle (700k papers on 2 cores:
    the import 6% faster),
    and, given ``copy``, the file's triples written there as the graph's import copy
    (:mod:`kg.store.copies`).

    N-Triples lines are counted (and copied) in the store's own form: a file whose lines
    are in that form already is checked by a regular expression and copied byte for byte;
    the other lines are parsed. Other formats are parsed. A triple written twice counts
    once (and is copied twice)."""

    def __init__(self, path: Path, fmt: ox.RdfFormat, gzipped: bool, copy: Path | None = None,
                 progress: Progress | None = None) -> None:
        super().__init__(name="kg-file-facts", daemon=True)
        self.path, self.fmt, self.gzipped, self.copy, self.progress = path, fmt, gzipped, copy, progress
        if progress is not None:  # before the load's own step
            progress("reading", 0, -(-path.stat().st_size // _MB))
        self.digest = ""
        self.triples = 0
        #: Whether some line may hold a blank node (its label is the file's: the bulk
        #: loader gives the store's nodes other ids).
        self.blank_labels = False
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            _yield_to_the_loader()
            self._run()
        except BaseException as exc:  # reported by result(); the loader reports bad syntax itself
            self.error = exc

    def _run(self) -> None:
        import array

        raw = _HashingReader(self.path.open("rb"), self.progress)
        hashes = array.array("q")
        with raw, (self.copy.open("wb") if self.copy is not None else contextlib.nullcontext()) as copy:

            def take(lines: bytes) -> None:
                # Counted (and copied) in the store's own form: "01"^^xsd:integer and "1"^^xsd:integer
                # are one triple to the store, and lines that differ in spacing alone are one.
                if copy is not None:
                    copy.write(lines)
                self.blank_labels = self.blank_labels or b"_:" in lines
                hashes.extend(map(hash, lines.split(b"\n")))
                hashes.pop()  # the empty string after the last newline

            stream = _decompressed(raw, self.gzipped, self.path, self.fmt)
            if self.fmt in _LINE_FORMATS:
                for block in line_blocks(stream):
                    take(canonical_lines(block))
            else:
                batch: list[ox.Triple | ox.Quad] = []
                for statement in ox.parse(stream, format=self.fmt):
                    batch.append(statement)
                    if len(batch) >= 10_000:
                        take(canonical_triples(batch))
                        batch.clear()
                take(canonical_triples(batch))
            for _ in iter(lambda: raw.read(1 << 20), b""):  # anything the parser left unread
                pass
        self.digest = "file:" + raw.sha256.hexdigest()
        self.triples = _distinct(hashes)

    def result(self) -> tuple[str, int]:
        """(digest, distinct triples), once the thread is done."""
        self.join()
        if self.error is not None:
            raise self.error
        return self.digest, self.triples


def _yield_to_the_loader() -> None:
    """Lower this thread's priority as far as it goes (Linux schedules threads one by one),
    so that it works in the cores the bulk loader leaves idle rather than taking them from it."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def line_blocks(stream: IO[bytes]) -> Iterator[bytes]:
    """``stream`` in blocks of about :data:`BLOCK` bytes, each ending at the end of a line
    (the last one given a newline if it had none)."""
    rest = b""
    for block in iter(lambda: stream.read(BLOCK), b""):
        block = rest + block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield block[:cut]
    if rest:
        yield rest + b"\n"


def _decompressed(raw: _HashingReader, gzipped: bool, path: Path, fmt: ox.RdfFormat) -> IO[bytes]:
    from kg.inputlimits import guarded

    stream = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw)  # type: ignore[call-overload]
    return guarded(stream, path, fmt.name, compressed=gzipped)


def _distinct(hashes: Any) -> int:
    if not len(hashes):
        return 0
    import numpy as np

    # Sorted, then the changes counted: np.unique takes seventy times as long (numpy 2.4).
    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1


class _HashingReader(PassThroughReader):
    """A binary file whose bytes are hashed as they are read; ``progress`` is told of each
    megabyte read as ``step`` (of the file's size)."""

    def __init__(self, fh: IO[bytes], progress: Progress | None = None, step: str = "reading") -> None:
        super().__init__(fh)
        self.sha256 = hashlib.sha256()
        self.progress, self.step = progress, step
        self.done = 0
        self.megabytes = -(-os.fstat(fh.fileno()).st_size // _MB) if progress is not None else 0

    def _took(self, data: bytes) -> bytes:
        self.sha256.update(data)
        if self.progress is not None and data:
            before, self.done = self.done, self.done + len(data)
            if self.done // _MB > before // _MB or not before:
                self.progress(self.step, min(-(-self.done // _MB), self.megabytes), self.megabytes)
        return data


# -- replacing a graph --------------------------------------------------------------------


def work_folder(store_dir: Path | None) -> Path:
    """A fresh work folder: inside the store's directory (so that the next open finds an
    unfinished replacement), or a temporary one for an in-memory store."""
    if store_dir is None:
        import tempfile

        return Path(tempfile.mkdtemp(prefix="kg-import-"))
    folder = store_dir / WORK_FOLDER / uuid.uuid4().hex
    folder.mkdir(parents=True)
    return folder


@dataclass
class Diff:
    """What a replacement changes, as N-Triples files in its work folder."""

    folder: Path
    graph: ox.NamedNode
    #: Distinct triples of the new content, and the digest of the file it came from.
    triples: int = 0
    digest: str = ""
    added: int = 0
    removed: int = 0
    #: Quads of a quad format's provenance graph, left out: they describe the graphs of
    #: the store that wrote the file, and TechKG keeps its own (issue #13).
    skipped_provenance: int = 0
    files: dict[str, str] = field(default_factory=lambda: {
        "added": "added.nt", "blank": "added-blank-nodes.nt", "removed": "removed.nt", "content": "new.nt"})

    def path(self, name: str) -> Path:
        return self.folder / self.files[name]

    def delta(self) -> Delta | None:
        """The replacement's net change, each triple inserted (True) or deleted (False), as
        a transaction's writes say theirs (:attr:`kg.derived.Changes.deltas`); None past
        :data:`kg.derived.DELTA_LIMIT` triples. (Blank nodes carry the store's own ids in
        both files.) Read before :func:`apply`, which removes the files."""
        if self.added + self.removed > DELTA_LIMIT:
            return None
        delta: Delta = {}
        for name, inserted in (("removed", False), ("added", True), ("blank", True)):
            if self.path(name).stat().st_size:
                parsed = ox.parse(path=str(self.path(name)), format=ox.RdfFormat.N_TRIPLES)
                delta.update((quad.triple, inserted) for quad in parsed)
        return delta


def _normalise(source: IO[bytes], fmt: ox.RdfFormat, out: Path, blank: Path) -> int:
    """The triples of ``source`` (a quad format's graphs flattened, its provenance graph
    left out) as N-Triples in the store's own form (:func:`canonical_lines`): those with
    blank nodes apart, their nodes given fresh ids that stay the same on a retry. Returns
    how many provenance quads it left out.

    N-Triples is taken a block of lines at a time: the lines without ``_:`` go through
    :func:`canonical_lines` as they are (a file in the store's form is checked and copied,
    not parsed), and only the others are parsed. A syntax error found that way is
    reported with the file's own line numbers by parsing the file again: see :func:`diff`."""
    fresh: dict[str, ox.BlankNode] = {}
    skipped = 0

    def node(term: Any) -> Any:
        if isinstance(term, ox.BlankNode):
            found = fresh.get(term.value)
            if found is None:
                found = fresh[term.value] = ox.BlankNode()
            return found
        return term

    with out.open("wb") as plain, blank.open("wb") as blanks:

        def take(statements: Iterable[ox.Quad]) -> None:
            nonlocal skipped
            lines: list[str] = []
            blank_lines: list[str] = []
            for q in statements:
                if q.graph_name == PROVENANCE:
                    skipped += 1
                    continue
                s, o = q.subject, q.object
                if isinstance(s, ox.BlankNode) or isinstance(o, ox.BlankNode):
                    blank_lines.append(f"{node(s)} {q.predicate} {node(o)} .\n")
                else:
                    lines.append(f"{s} {q.predicate} {o} .\n")
            plain.write(canonical_lines("".join(lines).encode()))
            blanks.write(canonical_lines("".join(blank_lines).encode()))

        if fmt in _LINE_FORMATS:
            for block in line_blocks(source):
                if b"_:" in block:  # blank nodes (or "_:" in a literal): those lines are parsed
                    lines = block.split(b"\n")
                    take(ox.parse(b"\n".join(line for line in lines if b"_:" in line), format=fmt))
                    block = b"".join(line + b"\n" for line in lines if line and b"_:" not in line)
                plain.write(canonical_lines(block))
        else:
            batch: list[ox.Quad] = []
            for q in ox.parse(source, format=fmt):
                batch.append(q)
                if len(batch) >= 10_000:
                    take(batch)
                    batch.clear()
            take(batch)
    return skipped


#: The memory DuckDB may use to compare a graph's old and new lines before it spills to the
#: work folder. kg link of 700k papers compares 1.6M lines: 0.82 GB at the peak of the
#: whole command at 512 MB, 1.34 GB at 1 GB (3 s faster).
DIFF_MEMORY = "512MB"


def _duckdb(folder: Path) -> duckdb.DuckDBPyConnection:
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")  # DuckDB's bar goes to stdout
    spill = folder / "spill"
    spill.mkdir(exist_ok=True)
    con.execute(f"SET memory_limit = '{DIFF_MEMORY}'; SET temp_directory = '{spill}'")
    con.execute("SET preserve_insertion_order = false")
    return con


def _lines(path: Path) -> str:
    return f"read_csv('{path}', columns = {{'t': 'VARCHAR'}}, {_CSV})"


def diff(
    store: ox.Store, graph: ox.NamedNode, source: Path, fmt: ox.RdfFormat, gzipped: bool, folder: Path,
    old_copy: Path | None = None, progress: Progress | None = None,
) -> Diff:
    """Work out what replacing ``graph`` by the content of ``source`` changes. Raises
    SyntaxError (and the like) for a malformed file; the store is not touched.

    The old content is read from ``old_copy`` (the graph's import copy, whose blank-node
    labels are the store's ids) when there is one, or else dumped (by Oxigraph, in a
    thread) while the new file is normalised. The new content stays in the work folder
    (``new.nt``, blank-node triples included), to become the graph's import copy."""
    result = Diff(folder, graph)
    new = result.path("content")
    old = old_copy if old_copy is not None else folder / "old.nt"
    dumping = None if old_copy is not None else Background(
        lambda: store.dump(str(old), ox.RdfFormat.N_TRIPLES, from_graph=graph), "kg-dump-old")
    try:
        raw = _HashingReader(source.open("rb"), progress)
        with raw:
            try:
                result.skipped_provenance = _normalise(_decompressed(raw, gzipped, source, fmt), fmt, new,
                                                       result.path("blank"))
            except SyntaxError:
                _parse_whole(source, fmt, gzipped)  # the same error, at its place in the file
                raise
            for _ in iter(lambda: raw.read(1 << 20), b""):
                pass
    finally:
        if dumping is not None:
            dumping.result()
    result.digest = "file:" + raw.sha256.hexdigest()
    if progress is not None:
        progress("comparing", 0, 0)
    con = _duckdb(folder)
    try:
        copy = "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\\x01')"
        con.execute(f"CREATE TEMP TABLE new_lines AS SELECT DISTINCT t FROM {_lines(new)}")
        con.execute(f"CREATE TEMP TABLE old_lines AS SELECT DISTINCT t FROM {_lines(old)}")
        # New lines hold no blank node (those are apart, with fresh ids): the old ones that
        # do are all removed, and never taken for one of the new.
        with result.path("blank").open("rb") as lines:
            blank = sum(1 for _ in lines)
        result.added = blank + _scalar(
            con, f"COPY (SELECT t FROM new_lines EXCEPT SELECT t FROM old_lines) TO '{result.path('added')}' {copy}")
        result.removed = _scalar(
            con, f"COPY (SELECT t FROM old_lines EXCEPT SELECT t FROM new_lines) TO '{result.path('removed')}' {copy}")
        result.triples = blank + _scalar(con, "SELECT count(*) FROM new_lines")
    finally:
        con.close()
    if old_copy is None:
        old.unlink()
    with new.open("ab") as content, result.path("blank").open("rb") as blanks:
        shutil.copyfileobj(blanks, content)
    shutil.rmtree(folder / "spill", ignore_errors=True)
    if progress is not None:
        progress("comparing", 1, 1)
    return result


def _parse_whole(source: Path, fmt: ox.RdfFormat, gzipped: bool) -> None:
    """Parse the whole file, raising its first syntax error with the file's own line."""
    with open_rdf(source, gzipped, fmt) as stream:
        for _ in ox.parse(stream, format=fmt):
            pass


class Background(threading.Thread):
    """A call run in a thread of its own (Oxigraph's loader, dump and updates leave the
    GIL), whose exception :meth:`result` raises in the caller."""

    def __init__(self, call: Callable[[], object], name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.call = call
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.call()
        except BaseException as exc:
            self.error = exc

    def result(self) -> None:
        self.join()
        if self.error is not None:
            raise self.error


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0]) if row else 0


def write_journal(change: Diff, provenance: str, activity: str) -> None:
    """Make the replacement durable: from here on it completes, now or at the next open.
    ``provenance`` is the update that records ``activity`` (its IRI) as the graph's maker."""
    for name in change.files:
        fsync(change.path(name))
    record = {"graph": change.graph.value, "files": change.files, "provenance": provenance,
              "activity": activity, "digest": change.digest,
              "triples": change.triples, "added": change.added, "removed": change.removed}
    tmp = change.folder / (JOURNAL + ".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    fsync(tmp)
    tmp.replace(change.folder / JOURNAL)
    fsync(change.folder)


#: Told, after a replacement committed, of the graph, the file of its new content (which
#: stays in place until the work folder goes), the activity and the digest.
Installed = Callable[[ox.NamedNode, Path, str, str], None]


def apply(store: ox.Store, folder: Path, update: Callable[[str], None], installed: Installed | None = None,
          progress: Progress | None = None) -> None:
    """Apply the journalled replacement in ``folder`` (again, if it was cut short) and
    remove the folder. ``update`` runs the provenance update; then ``installed`` is told
    of the new content (a journal written before import copies has none).

    The added and the removed triples are disjoint (new minus old, old minus new), so the
    bulk loader adds while the deletions run, side by side; either is a no-op when redone."""
    record = json.loads((folder / JOURNAL).read_text(encoding="utf-8"))
    graph = ox.NamedNode(record["graph"])
    files = {name: folder / file for name, file in record["files"].items()}
    added = str(files["added"])
    if progress is not None:  # the bulk loader does not say how far it is
        progress("adding", 0, 0)
    loading = Background(lambda: store.bulk_load(path=added, format=ox.RdfFormat.N_TRIPLES, to_graph=graph),
                         "kg-load-added") if files["added"].stat().st_size else None
    try:
        remove_lines(store, graph, files["removed"], progress, record.get("removed", 0))
    finally:
        if loading is not None:
            loading.result()
    if files["blank"].stat().st_size:
        # Not through the bulk loader, which would give the nodes new ids on every retry.
        store.extend(ox.Quad(t.subject, t.predicate, t.object, graph)
                     for t in ox.parse(path=str(files["blank"]), format=ox.RdfFormat.N_TRIPLES))
    if progress is not None:
        progress("adding", record.get("added", 0), record.get("added", 0))
    update(record["provenance"])
    store.flush()
    content = files.get("content")
    if installed is not None and content is not None and content.is_file() and "activity" in record:
        pause_point("store.replaced")
        installed(graph, content, record["activity"], record["digest"])
    shutil.rmtree(folder, ignore_errors=True)


def remove_lines(store: ox.Store, graph: ox.NamedNode, removed: Path, progress: Progress | None = None,
                 total: int = 0) -> None:
    """Remove the triples listed in ``removed`` (N-Triples as Oxigraph writes them, one a
    line) from ``graph``, a batch per transaction. Lines without a blank node go into
    ``DELETE DATA`` as they are, unparsed; those with one (which ``DELETE DATA`` cannot
    name) are parsed and removed quad by quad. The memtables are flushed every
    :data:`FLUSH_EVERY` triples, until a flush has to wait (see there)."""
    plain: list[str] = []
    blank: list[str] = []
    since_flush = done = 0
    flushing = True

    def commit() -> None:
        nonlocal since_flush, flushing, done
        since_flush += len(plain) + len(blank)
        done += len(plain) + len(blank)
        if plain:
            store.update(f"DELETE DATA {{ GRAPH {graph} {{\n{''.join(plain)}}} }}")
            plain.clear()
        if blank:
            for t in ox.parse(input="".join(blank), format=ox.RdfFormat.N_TRIPLES):
                store.remove(ox.Quad(t.subject, t.predicate, t.object, graph))
            blank.clear()
        if flushing and since_flush >= FLUSH_EVERY:
            started = time.monotonic()
            store.flush()
            flushing = time.monotonic() - started < FLUSH_WAITED
            since_flush = 0
        if progress is not None:
            progress("removing", done, total)

    with removed.open(encoding="utf-8") as lines:
        for line in lines:
            (blank if "_:" in line else plain).append(line)  # "_:" in a literal: removed one by one, as well
            if len(plain) + len(blank) >= DELETE_BATCH:
                commit()
    commit()


def discard(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def pending(store_dir: Path) -> list[str]:
    """The work folders left in ``store_dir``: the graph each journalled replacement
    replaces, "" for a folder that never got its journal."""
    root = store_dir / WORK_FOLDER
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            out.append(json.loads((folder / JOURNAL).read_text(encoding="utf-8"))["graph"])
        except (OSError, ValueError, KeyError):
            out.append("")
    return out


def resume(store: ox.Store, store_dir: Path, update: Callable[[str], None],
           installed: Installed | None = None) -> list[str]:
    """Finish every replacement a killed process journalled, and drop the work folders of
    those it had not (their store was never touched). Returns the graphs completed."""
    root = store_dir / WORK_FOLDER
    if not root.is_dir():
        return []
    done = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if (folder / JOURNAL).is_file():
            done.append(json.loads((folder / JOURNAL).read_text(encoding="utf-8"))["graph"])
            apply(store, folder, update, installed)
        else:
            discard(folder)
    return done
