"""The search index on disk: where it lives, making it, keeping it current, and whether it is.

The index is derived data: losing it loses nothing, ``kg build`` makes it again, and every
write keeps it current. It lives beside the store, as the analytics file does:

- an embedded store in ``DIR``: the folder ``DIR.search/``;
- a SPARQL endpoint: in the per-user data directory, one folder per endpoint
  (``~/.local/share/techkg/search/<endpoint>``); ``:memory:``: a temporary folder.

Inside, ``current`` is a link to the index in use (``index-<id>/``: tantivy's files and
``techkg-search.json``, which records the schema version, when it was made, and each graph's
provenance signature and the store's view as of the state it holds). A rebuild writes a
new ``index-<id>/`` and then swaps the link in one rename, so a search never meets a half
made index; an update commits in place (a tantivy commit is atomic). ``lock`` serialises
the commands that write the index.

Keeping it current (:func:`update_index`): a write names what it changed, the papers and
techniques and the graphs it wrote; those documents are made again from the store. Any other
graph whose signature changed since the index last matched the store (a write that did not
say) is followed to its documents: those the graph holds now, and those the index says came
from it. A graph too large for that (:data:`REPAIR_LIMIT` triples) makes the whole index again,
which at 700k papers takes two fifths of the time the import of those papers took, in under 1 GB. A
write's keeper (:mod:`kg.search.keeper`) gives a bound (``most``): past it, or where the
whole index would be made again, the index is left as it was, stale, for the next search.
:func:`freshness` compares the signatures, or (embedded store) only the view first.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg import scratch
from kg.errors import SearchError
from kg.search.schema import SCHEMA_VERSION, build_schema

if TYPE_CHECKING:
    import pyoxigraph as ox
    import tantivy

    from kg.store.base import GraphStore

__all__ = ["REPAIR_LIMIT", "Freshness", "IndexReport", "exists", "freshness", "index_root", "open_index", "quick_fresh",
           "ready_index", "rebuild_index", "update_index"]

META = "techkg-search.json"
CURRENT = "current"
#: A changed graph of more triples than this is not followed document by document: the
#: whole index is made again.
REPAIR_LIMIT = 300_000
_MEMORY: dict[str, Path] = {}
Progress = Callable[[str, int, int], None]


def index_root(spec: str | None) -> Path:
    """The folder of the search index of the store ``spec`` names (a directory, ``:memory:``
    or an endpoint URL, or a store's ``location``)."""
    from kg.store import store_spec

    value = store_spec(spec)
    if value == ":memory:":
        key = str(os.getpid())
        if key not in _MEMORY:
            _MEMORY[key] = scratch.for_process("techkg-search-")
        return _MEMORY[key]
    if value.startswith(("http://", "https://")):
        from platformdirs import user_data_path

        from kg.iris import slugify
        from kg.store.endpoint import redact

        name = slugify(redact(value.split(";", 1)[0].strip()))
        return user_data_path("techkg", appauthor=False) / "search" / name
    folder = Path(value).expanduser()
    return folder.with_name(folder.name + ".search")


def exists(root: Path) -> bool:
    """Whether there is an index in use under ``root``."""
    return _current(root) is not None


def _current(root: Path) -> Path | None:
    link = root / CURRENT
    try:
        target = root / os.readlink(link)
    except OSError:
        return None
    return target if (target / META).exists() else None


def _read_meta(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_meta(folder: Path, meta: dict[str, Any]) -> None:
    tmp = folder / f"{META}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    os.replace(tmp, folder / META)


@contextlib.contextmanager
def _locked(root: Path, wait: float = 30.0) -> Iterator[None]:
    """The index's writers' lock (flock), waited for up to ``wait`` seconds."""
    root.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait
    with open(root / "lock", "a+b") as fh:
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SearchError(f"the search index in {root} is being written by another command",
                                      hint="Wait for it to finish and search again.") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def open_index(root: Path) -> tuple[tantivy.Index, dict[str, Any]] | None:
    """The index in use under ``root`` and its record, or None when there is none (or it was
    made by another version, or cannot be read)."""
    import tantivy

    folder = _current(root)
    if folder is None:
        return None
    meta = _read_meta(folder)
    if meta.get("schema") != SCHEMA_VERSION:
        return None
    try:
        return tantivy.Index.open(str(folder)), meta
    except (OSError, ValueError):
        return None


# -- freshness -------------------------------------------------------------------------------


@dataclass
class Freshness:
    """Whether the index holds the store's state: ``fresh``, ``stale`` (``changed`` names the
    graphs written since), or ``missing`` (none, another version's, or unreadable)."""

    state: str
    changed: list[str] = field(default_factory=list)
    built: str | None = None
    documents: int = 0

    @property
    def note(self) -> str:
        if self.state == "fresh":
            return ""
        if self.state == "missing":
            return "there is no search index yet"
        import pyoxigraph as ox

        from kg.graphs import graph_name

        names = ", ".join(sorted({graph_name(ox.NamedNode(g)) for g in self.changed})) or "the store"
        return f"the search index is stale ({names} changed since it was made)"


def _signatures(store: GraphStore) -> dict[str, str]:
    from kg.analytics.files import graph_states

    return {g: s.signature for g, s in graph_states(store).items()}


def _view(store: GraphStore) -> str | None:
    """The view of an embedded store whose state ``store`` reads: a reader's own view, or for
    the writer (which alone can change it) the view it last published; None otherwise."""
    if getattr(store, "read_only", False):
        view = getattr(store, "view", None)
        return view if isinstance(view, str) else None
    revision: Callable[[], str | None] | None = getattr(store, "revision", None)
    return revision() if revision is not None else None


def quick_fresh(spec: str | None) -> bool:
    """Whether the index of the embedded store ``spec`` is fresh, told without opening the
    store: it was last found to hold the state of the store's current view."""
    from kg.analytics.files import current_view, store_dir

    folder = store_dir(spec)
    if folder is None:
        return False
    current = _current(index_root(spec))
    if current is None:
        return False
    meta = _read_meta(current)
    view = current_view(folder)
    return view is not None and meta.get("schema") == SCHEMA_VERSION and meta.get("view") == view


def freshness(store: GraphStore) -> Freshness:
    """Whether the index of ``store`` holds its current state."""
    folder = _current(index_root(store.location))
    meta = _read_meta(folder) if folder is not None else {}
    if folder is None or meta.get("schema") != SCHEMA_VERSION:
        return Freshness("missing")
    view = _view(store)
    built, documents = meta.get("built"), int(meta.get("documents", 0))
    if view is not None and meta.get("view") == view:
        return Freshness("fresh", built=built, documents=documents)
    recorded: dict[str, str] = meta.get("graphs", {})
    now = _signatures(store)
    changed = sorted(g for g in set(recorded) | set(now) if recorded.get(g) != now.get(g))
    return Freshness("stale" if changed else "fresh", changed, built, documents)


# -- writing ---------------------------------------------------------------------------------


@dataclass
class IndexReport:
    """What a rebuild or an update did."""

    mode: str  # rebuilt | updated | unchanged | none (no index to keep current) | stale (past ``most``)
    documents: int = 0
    written: int = 0
    removed: int = 0
    seconds: float = 0.0
    path: str = ""
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _user_graphs(store: GraphStore) -> list[str]:
    from kg.graphs import GraphKind, graph_kind

    return [g.value for g in store.named_graphs() if graph_kind(g) is GraphKind.user]


def rebuild_index(store: GraphStore, *, progress: Progress | None = None) -> IndexReport:
    """Make the whole index again from ``store``, then put it in use."""
    root = index_root(store.location)
    with _locked(root):
        return _rebuild(store, root, progress)


def _writer(index: tantivy.Index, *, threads: int, heap: int = 64_000_000) -> tantivy.IndexWriter:
    return index.writer(heap_size=max(heap, threads * 32_000_000), num_threads=threads)


def _rebuild_heap() -> int:
    """The indexing memory of a rebuild: up to 400 MB (at 700k papers, as fast as 800 MB and
    a fifth faster than 200 MB: fewer, larger segments to merge), at most an eighth of the
    memory free."""
    import psutil

    return int(min(400_000_000, psutil.virtual_memory().available // 8))


def _rebuild(store: GraphStore, root: Path, progress: Progress | None) -> IndexReport:
    import tantivy

    from kg.search.documents import documents, load
    from kg.search.facts import all_facts

    start = time.perf_counter()
    signatures, view = _signatures(store), _view(store)  # read first: a write meanwhile leaves it stale
    folder = root / f"index-{uuid.uuid4().hex[:12]}"
    folder.mkdir(parents=True)
    try:
        # Two steps, so that DuckDB's memory and tantivy's are never held at once: the
        # documents made into a file, DuckDB closed, then the file indexed.
        with scratch.folder(".build-", root) as work:
            read = (lambda done, total: progress("reading the store", done, total)) if progress else None
            con = load(all_facts(store, progress=read), work)
            made = work / "documents.jsonl"
            written = 0
            try:
                with open(made, "w", encoding="utf-8", newline="\n") as out:
                    for _iri, doc in documents(con, user_graphs=_user_graphs(store)):
                        out.write(doc + "\n")  # (one line: JSON escapes a newline in a value)
                        written += 1
                        if progress and written % 50_000 == 0:
                            progress("making the documents", written, 0)
            finally:
                con.close()
            index = tantivy.Index(build_schema(), path=str(folder))
            threads = max(1, min(4, os.cpu_count() or 1))
            writer = _writer(index, threads=threads, heap=_rebuild_heap())
            with open(made, encoding="utf-8", newline="\n") as lines:
                for done, line in enumerate(lines, start=1):
                    writer.add_json(line)
                    if progress and done % 50_000 == 0:
                        progress("indexing", done, written)
            writer.commit()  # the segments are merged in the background while the process lasts, not waited for
            del writer
        _write_meta(folder, {"schema": SCHEMA_VERSION, "built": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                             "graphs": signatures, "view": view, "documents": written, "store": store.location})
        _swap(root, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return IndexReport("rebuilt", written, written, 0, time.perf_counter() - start, str(root))


def _swap(root: Path, folder: Path) -> None:
    """Put ``folder`` in use (one rename of the link), and remove the indexes no longer in use."""
    tmp = root / f"{CURRENT}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(folder.name, tmp)
    os.replace(tmp, root / CURRENT)
    for other in root.glob("index-*"):
        if other != folder and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)  # a search that has it open keeps its files (mmap)


def update_index(store: GraphStore, *, papers: Iterable[str] = (), techniques: Iterable[str] = (),
                 graphs: Iterable[ox.NamedNode | str] | None = None, most: int | None = None) -> IndexReport:
    """Keep the index current after a write to ``store``: the documents of ``papers`` and
    ``techniques`` (IRIs) are made again, ``graphs`` being what the write changed (None: not
    known). Every other change since the index last matched the store is found from the
    graphs' signatures and followed (see the module's docstring). With no index yet, nothing
    is done (``kg search`` and ``kg build`` make it). With ``most``, an update that would
    make more documents than that again, or the whole index, is not made: the index stays as
    it was (mode ``stale``, with a note saying how much is left to the next search)."""
    root = index_root(store.location)
    if _current(root) is None:
        return IndexReport("none", path=str(root), note="no search index yet")
    with _locked(root):
        return _update(store, root, {*papers, *techniques},
                       None if graphs is None else {g if isinstance(g, str) else g.value for g in graphs}, most)


def _update(store: GraphStore, root: Path, targets: set[str], covered: set[str] | None,
            most: int | None = None) -> IndexReport:
    start = time.perf_counter()
    opened = open_index(root)
    if opened is None:
        return _rebuild(store, root, None) if most is None else _stale(root, "the whole index to make again")
    index, meta = opened
    folder = _current(root)
    assert folder is not None
    now, view = _signatures(store), _view(store)
    recorded: dict[str, str] = meta.get("graphs", {})
    changed = {g for g in set(recorded) | set(now) if recorded.get(g) != now.get(g)}
    uncovered = changed - (covered or set())
    if uncovered:
        found = _graph_targets(store, index, uncovered, now)
        if found is None:  # too large to follow: the whole index again
            return _rebuild(store, root, None) if most is None else _stale(root, "the whole index to make again")
        targets |= found
    if most is not None and len(targets) > most:
        return _stale(root, f"{len(targets):,} documents to make again")
    written = removed = 0
    if targets:
        written, removed = _rewrite(store, index, sorted(targets))
    meta.update({"graphs": now, "view": view, "documents": index.searcher().num_docs,
                 "updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
    _write_meta(folder, meta)
    return IndexReport("updated" if targets else "unchanged", int(meta["documents"]), written, removed,
                       time.perf_counter() - start, str(root))


def _stale(root: Path, left: str) -> IndexReport:
    return IndexReport("stale", path=str(root), note=left)


def _graph_targets(store: GraphStore, index: tantivy.Index, graphs: set[str], now: dict[str, str]
                   ) -> set[str] | None:
    """The documents the changed ``graphs`` may have changed: the papers and techniques they
    hold now, and those the index says came from them; None when one is too large."""
    import pyoxigraph as ox
    import tantivy

    from kg.analytics.files import graph_states
    from kg.search.query import total

    states = graph_states(store)
    out: set[str] = set()
    schema = index.schema
    searcher = index.searcher()
    for graph in graphs:
        if graph in now:
            node = ox.NamedNode(graph)
            size = states[graph].triples if graph in states else None
            if size is None:
                size = store.count(node)
            if size > REPAIR_LIMIT:
                return None
            rows = store.select(
                f"""SELECT DISTINCT ?s WHERE {{ GRAPH {node} {{ {{ ?s ?p ?o }}
                      UNION {{ ?n tkg:noteOf ?s }} UNION {{ ?r tkg:follows ?s }} UNION {{ ?t tkg:primaryPaper ?s }}
                    }} FILTER(isIRI(?s)) }}""")
            out |= {s.value for row in rows.rows if isinstance(s := row["s"], ox.NamedNode)}
        query = tantivy.Query.term_query(schema, "graphs", graph)
        count = total(searcher.search(query, 1))
        if count:
            hits = searcher.search(query, count).hits
            out |= {str(searcher.doc(address).get_first("iri")) for _score, address in hits}
    return out


def ready_index(store: GraphStore, *, progress: Progress | None = None,
                on_rebuild: Callable[[], None] | None = None) -> tuple[tantivy.Index, str]:
    """The index of ``store``, made first when there is none (``on_rebuild`` is told) and
    brought up to date when it is stale, and a note of what was done ("" when it was fresh).
    When another command holds the index's lock, the index as it is answers, and the note
    says it may be stale."""
    root = index_root(store.location)
    found = freshness(store)
    note = ""
    if found.state == "missing":
        if on_rebuild is not None:
            on_rebuild()
        report = rebuild_index(store, progress=progress)
        note = f"made the search index: {report.documents:,} papers and techniques in {report.seconds:.1f} s"
    elif found.state == "stale":
        try:
            report = update_index(store)
            note = f"brought the search index up to date ({report.written:,} documents made again)"
        except SearchError as error:
            note = f"{found.note}; {error.message}"
    opened = open_index(root)
    if opened is None:
        raise SearchError(f"the search index in {root} cannot be read",
                          hint="Make it again with kg build --force, or delete the folder: it is derived data.")
    return opened[0], note


def _rewrite(store: GraphStore, index: tantivy.Index, targets: list[str]) -> tuple[int, int]:
    """Make the documents of ``targets`` again: each is deleted and added back if it still is one."""
    from kg.search.documents import documents, load_rows
    from kg.search.facts import facts_of

    con = load_rows(facts_of(store, targets))
    try:
        docs = list(documents(con, targets=targets, user_graphs=_user_graphs(store)))
    finally:
        con.close()
    writer = _writer(index, threads=1)
    for iri in targets:
        writer.delete_documents_by_term("iri", iri)
    for _iri, doc in docs:
        writer.add_json(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    kept = {iri for iri, _doc in docs}
    return len(docs), len([t for t in targets if t not in kept])
