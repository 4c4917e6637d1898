"""Two-way sync of the reading list with a Zotero library, that never loses an edit.

``sync(store, api, options)`` brings a Zotero library (user or group) and the graph
together, in both directions:

- **what is synced**, per paper (a :class:`~ingest.zotero_merge.Record`): the reading
  status (any custom one kept verbatim; in Zotero as the zotero-reading-list plugin's
  ``Read_Status:`` lines in Extra, as ``status/...`` tags, or both), the title, the
  tags, the categories (collections, by name, optionally mapped), the child notes, and
  the paper itself: a paper new in the graph becomes an item of the right type, an item
  new in Zotero becomes a paper.
- **how it reads**: only what changed since the library version of the last sync (the
  watermark, one per library) — ``format=versions`` with ``since=``, the changed
  objects by key 50 at a time, ``/deleted`` — and, on the graph side, nothing unless a
  graph the sync depends on was written since (checked in the provenance graph).
- **how it merges**: three-way, field by field, against the last agreed record kept in
  the ``zotero-sync`` graph (:mod:`ingest.zotero_merge`). Conflicts follow the rule of
  ``--conflict`` and are recorded (``tkg:SyncConflict``) with the losing value.
  Deleting an item in Zotero (trash or for good) takes the paper off the reading list,
  unless the graph changed it since: then the item is restored (or created again) and
  the case is reported as a conflict.
- **how it writes**: every write carries ``If-Unmodified-Since-Version``; creations carry
  a ``Zotero-Write-Token``; at most 50 objects per request (fewer after a 413); each
  object's result (``successful``/``unchanged``/``failed``) is acted on. A 412 or 428
  (another client wrote) re-reads what changed, merges again and goes on. A dropped
  connection is retried with the same write token; if the write had gone through, the
  items already written are found by the identity each carries (arXiv id, DOI, or a
  ``TechKG-ID:`` line; a note by its parent and text; a collection by name), never
  created twice. The same holds when a sync stopped half-way is run again.
- **how it commits**: the graph changes in one transaction at the end (reading states
  through :func:`kg.reading.status_change`, Zotero data in the ``zotero`` graph, sync
  state in ``zotero-sync``), so a failed sync leaves the graph exactly as it was, with
  one exception that keeps edits from being lost: before Zotero loses a value to the
  graph (a conflict the graph won, an item restored after a deletion) the conflict is
  recorded, with the losing value, in the conflict log of ``zotero-sync`` (write-ahead).

``options.dry_run`` reads and plans only; ``direction="pull"`` (``kg ingest zotero``)
writes nothing to Zotero and leaves conflicts for the next two-way sync.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import Literal, NamedNode, Triple

from ingest.zotero import (
    BATCH,
    TECHKG_ID,
    Changes,
    LibrarySpec,
    PreconditionFailed,
    TooLarge,
    ZoteroAPI,
    ZoteroItem,
    format_extra,
    paper_iri_for,
    parse_item,
    parse_time,
    status_tag,
)
from ingest.zotero_merge import Conflict, Merged, Record, Stamps, agreed_base, merge
from kg.errors import SyncError
from kg.graphs import CATALOG, PROVENANCE, READING, READING_LIST, ZOTERO, ZOTERO_SYNC
from kg.iris import org_iri, parse_arxiv_id, person_iri, slugify
from kg.notes import PaperNotes, synced_notes
from kg.notes import settle as settle_notes
from kg.reading import KNOWN_STATUSES, known_status_triples, status_change, status_removal
from kg.readinglist import READING_SCHEME
from kg.results import python_value
from kg.store.base import Activity, GraphStore, Transaction
from kg.vocab import (
    BIBO,
    DCTERMS,
    FABIO,
    FOAF,
    ID,
    PROV,
    RDF,
    SKOS,
    TKG,
    boolean,
    date_literal,
    datetime_literal,
    integer,
    text,
)

__all__ = ["Change", "ConflictRecord", "SyncOptions", "SyncReport", "conflict_rows", "sync"]

RDF_JSON = RDF.JSON
#: Graphs whose changes the sync must look at: the reading state, the reading list, the
#: catalog and the graph's copy of the Zotero data.
WATCHED = (READING, READING_LIST, CATALOG, ZOTERO)
STATUS_FORMATS = ("extra", "tags", "both")


# -- options and report ---------------------------------------------------------------


@dataclass(frozen=True)
class SyncOptions:
    """How to sync. ``collections`` maps Zotero collection names to reading-list
    category labels (unmapped names are used as they are)."""

    conflict: str = "newest"
    status_format: str = "extra"
    collections: Mapping[str, str] = field(default_factory=dict)
    dry_run: bool = False
    direction: str = "both"
    create_items: bool = True
    max_attempts: int = 8
    now: Callable[[], dt.datetime] | None = None

    def __post_init__(self) -> None:
        if self.conflict not in ("newest", "zotero", "graph"):
            raise SyncError(f"unknown conflict rule {self.conflict!r}",
                            hint="Use --conflict newest, --conflict zotero or --conflict graph.")
        if self.status_format not in STATUS_FORMATS:
            raise SyncError(f"unknown status format {self.status_format!r}",
                            hint="Use --status-format extra, tags or both.")
        if self.direction not in ("both", "pull"):
            raise SyncError(f"unknown direction {self.direction!r}")


@dataclass(frozen=True)
class Change:
    """One planned (or done) change: on which side, what, to which paper or item."""

    side: str
    action: str
    what: str
    title: str
    key: str = ""
    paper: str = ""
    fields: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"side": self.side, "action": self.action, "what": self.what, "title": self.title,
                "key": self.key, "paper": self.paper, "fields": list(self.fields)}


@dataclass(frozen=True)
class ConflictRecord:
    paper: str
    title: str
    key: str
    field: str
    base: Any
    graph: Any
    zotero: Any
    winner: str
    rule: str

    @property
    def losing_value(self) -> Any:
        return self.zotero if self.winner == "graph" else self.graph

    def as_dict(self) -> dict[str, Any]:
        return {"paper": self.paper, "title": self.title, "key": self.key, "field": self.field,
                "base": self.base, "graph": self.graph, "zotero": self.zotero, "winner": self.winner,
                "rule": self.rule, "losing_value": self.losing_value}


@dataclass
class SyncReport:
    library: str
    direction: str
    dry_run: bool
    version_before: int = 0
    version_after: int = 0
    changes: list[Change] = field(default_factory=list)
    conflicts: list[ConflictRecord] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    requests: int = 0
    retries: int = 0
    recoveries: int = 0
    seconds: float = 0.0
    graph_written: bool = False

    def counts(self) -> dict[str, int]:
        def n(side: str, *actions: str) -> int:
            return sum(1 for c in self.changes if c.side == side and c.action in actions and c.what != "collection")

        return {
            "zotero_created": n("zotero", "create"), "zotero_updated": n("zotero", "update", "restore"),
            "zotero_trashed": n("zotero", "trash"), "graph_created": n("graph", "create"),
            "graph_updated": n("graph", "update"), "graph_removed": n("graph", "delete"),
            "conflicts": len(self.conflicts), "duplicates": len(self.duplicates), "failed": len(self.failed),
        }

    def as_dict(self) -> dict[str, Any]:
        return {"library": self.library, "direction": self.direction, "dry_run": self.dry_run,
                "version_before": self.version_before, "version_after": self.version_after,
                **self.counts(), "changes": [c.as_dict() for c in self.changes],
                "conflict_list": [c.as_dict() for c in self.conflicts], "duplicate_items": self.duplicates,
                "failed_items": [{"item": k, "error": e} for k, e in self.failed],
                "requests": self.requests, "retries": self.retries, "recoveries": self.recoveries,
                "seconds": round(self.seconds, 3), "graph_written": self.graph_written}


# -- what the sync keeps about each side -------------------------------------------------


@dataclass
class Remote:
    """Zotero's side of one item, as last read (JSON in the sync state)."""

    key: str
    version: int = 0
    present: bool = True
    item_type: str = ""
    title: str = ""
    extra_status: str | None = None
    extra_status_at: str | None = None
    tag_status: str | None = None
    tags: list[str] = field(default_factory=list)
    status_tags: list[str] = field(default_factory=list)
    collections: list[str] = field(default_factory=list)
    extra_rest: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    note_keys: dict[str, str] = field(default_factory=dict)
    note_modified: dict[str, str] = field(default_factory=dict)
    modified: str | None = None
    creators: list[dict[str, str]] = field(default_factory=list)
    date: str = ""
    url: str = ""
    doi: str | None = None
    arxiv: str | None = None
    relations: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_item(cls, item: ZoteroItem, previous: Remote | None = None) -> Remote:
        remote = cls(
            key=item.key, version=item.version, present=not item.trashed, item_type=item.item_type,
            title=item.title, extra_status=item.extra_status,
            extra_status_at=item.extra_status_at.isoformat() if item.extra_status_at else None,
            tag_status=item.tag_status, tags=list(item.tags), status_tags=list(item.status_tags),
            collections=list(item.collections), extra_rest=list(item.extra_rest),
            modified=item.modified.isoformat() if item.modified else None, creators=item.creators,
            date=item.date, url=item.url, doi=item.doi, arxiv=item.arxiv,
            relations={str(p): [str(v) for v in (vals if isinstance(vals, list) else [vals])]
                       for p, vals in dict(item.data.get("relations") or {}).items()})
        if previous is not None:
            remote.notes = dict(previous.notes)
            remote.note_keys = dict(previous.note_keys)
            remote.note_modified = dict(previous.note_modified)
        return remote

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str) -> Remote:
        return cls(**json.loads(raw))

    def note_iri_for_key(self, key: str) -> str | None:
        return next((iri for iri, k in self.note_keys.items() if k == key), None)


@dataclass
class State:
    """The sync state of one linked item."""

    key: str
    paper: NamedNode
    version: int
    base: Record
    remote: Remote
    authored: dict[str, Any]


@dataclass
class GraphView:
    """What the graph says about one paper, as far as the sync is concerned."""

    paper: NamedNode
    status: str | None = None
    status_at: dt.datetime | None = None
    auth_title: str | None = None
    auth_categories: frozenset[str] = frozenset()
    linked: bool = False
    z_title: str | None = None
    z_tags: frozenset[str] = frozenset()
    z_categories: frozenset[str] = frozenset()
    z_notes: dict[str, str] = field(default_factory=dict)
    z_note_modified: dict[str, dt.datetime] = field(default_factory=dict)
    #: The graph's notes, the reader's own (reading graph) and Zotero's copies: z_notes shows them.
    notes: PaperNotes | None = None

    @property
    def authored(self) -> dict[str, Any]:
        return {"title": self.auth_title, "categories": sorted(self.auth_categories)}

    @property
    def exists(self) -> bool:
        return bool(self.status or self.auth_title or self.auth_categories or self.linked or self.z_title
                    or self.z_notes)


@dataclass
class Entry:
    """One paper in play in this sync."""

    paper: NamedNode
    key: str | None = None
    state: State | None = None
    remote: Remote | None = None
    gone: bool = False
    view: GraphView | None = None
    merged: Merged | None = None
    conflicts: list[Conflict] = field(default_factory=list)
    failed: str | None = None
    touched: bool = False
    graph_record: Record | None = None
    zotero_record: Record | None = None

    @property
    def title(self) -> str:
        for value in (self.merged.result.title if self.merged else None,
                      self.remote.title if self.remote else None,
                      self.view.auth_title if self.view else None, self.view.z_title if self.view else None):
            if value:
                return value
        return self.paper.value


# -- helpers -----------------------------------------------------------------------------


def _values(var: str, terms: Iterable[NamedNode | Literal]) -> str:
    """A VALUES block of RDF terms serialised by pyoxigraph (never pasted text)."""
    return f"VALUES ?{var} {{ {' '.join(str(t) for t in terms)} }}"


def _chunked(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i: i + size]


def _json_literal(value: Any) -> Literal:
    return Literal(json.dumps(value, sort_keys=True, ensure_ascii=False), datatype=RDF_JSON)


def _plain(term: Any) -> Any:
    return python_value(term) if term is not None else None


def _category_iri(label: str) -> NamedNode:
    return ID["reading-category/" + slugify(label)]


def note_iri(library: LibrarySpec, key: str) -> NamedNode:
    """The node of a Zotero child note that first appeared in Zotero."""
    return ID[f"note/zotero/{library.slug}/{key.lower()}"]


def item_node(library: LibrarySpec, key: str) -> NamedNode:
    return ID[f"zotero/{library.slug}/item/{key.lower()}"]


def _state_node(library: LibrarySpec, what: str, key: str) -> NamedNode:
    return ID[f"sync/zotero/{library.slug}/{what}/{key.lower()}"]


def _library_node(library: LibrarySpec) -> NamedNode:
    return ID[f"sync/zotero/{library.slug}"]


# -- the sync ------------------------------------------------------------------------------


def sync(store: GraphStore, api: ZoteroAPI, options: SyncOptions | None = None, *,
         progress: Callable[[str, int, int], None] | None = None) -> SyncReport:
    """Sync ``api.library`` with the graph in ``store``; see the module docstring."""
    return _Sync(store, api, options or SyncOptions(), progress).run()


class _Sync:
    def __init__(self, store: GraphStore, api: ZoteroAPI, options: SyncOptions,
                 progress: Callable[[str, int, int], None] | None) -> None:
        self.store = store
        self.api = api
        self.options = options
        self.library = api.library
        self.libname = str(api.library)
        self.progress = progress or (lambda stage, done, total: None)
        self.now = (options.now or (lambda: dt.datetime.now(dt.UTC)))()
        self.report = SyncReport(self.libname, options.direction, options.dry_run)
        self.entries: dict[str, Entry] = {}
        self.by_key: dict[str, Entry] = {}
        self.collection_names: dict[str, str] = {}
        self.collection_versions: dict[str, int] = {}
        self.to_graph_label = dict(options.collections)
        self.to_zotero_name = {label: name for name, label in options.collections.items()}
        self.batch = BATCH
        self.known_version = 0
        self.watermark = 0
        self.snapshot: dict[str, str] = {}
        self.graph_times: dict[str, dt.datetime] = {}
        self.graph_activity: dict[str, str] = {}
        self.collections_changed = False
        self.seen_duplicates: set[str] = set()
        self.recorded: set[str] = set()
        self.loaded_collections: dict[str, tuple[str, int]] = {}

    # -- top level -------------------------------------------------------------------

    def run(self) -> SyncReport:
        started = time.monotonic()
        requests_before, retries_before = self.api.counters.requests, self.api.counters.retries
        try:
            self._load_library()
            self.report.version_before = self.watermark
            self.progress("read", 0, 1)
            changes = self.api.read_changes(self.watermark, progress=self.progress)
            self.known_version = changes.version
            self._take_collections(changes)
            self._take_zotero_changes(changes)
            self._take_graph_changes(full=changes.full)
            self._load_views()
            for entry in self.entries.values():
                self._merge(entry)
            self.report.changes = self._plan()
            if not self.options.dry_run:
                if self.options.direction == "both":
                    self._push()
                self._commit(changes)
            self.report.version_after = self.known_version if not self.options.dry_run else self.watermark
            self.report.conflicts = self._conflict_records()
        finally:
            self.report.requests = self.api.counters.requests - requests_before
            self.report.retries = self.api.counters.retries - retries_before
            self.report.seconds = time.monotonic() - started
        return self.report

    # -- state -----------------------------------------------------------------------

    def _load_library(self) -> None:
        rows = self.store.select(
            f"""SELECT ?version ?snapshot WHERE {{ GRAPH {ZOTERO_SYNC} {{
                  {_library_node(self.library)} tkg:libraryVersion ?version .
                  OPTIONAL {{ {_library_node(self.library)} tkg:graphSnapshot ?snapshot }} }} }}""")
        if rows.rows:
            self.watermark = int(_plain(rows.rows[0]["version"]))
            raw = _plain(rows.rows[0]["snapshot"])
            self.snapshot = json.loads(raw) if raw else {}
        coll = self.store.select(
            f"""SELECT ?key ?name ?version WHERE {{ GRAPH {ZOTERO_SYNC} {{
                  ?c tkg:collectionName ?name ; tkg:library ?lib ; tkg:zoteroKey ?key ; tkg:itemVersion ?version }}
                  FILTER(?lib = {text(self.libname, None)}) }}""")
        for row in coll:
            self.collection_names[str(_plain(row["key"]))] = str(_plain(row["name"]))
            self.collection_versions[str(_plain(row["key"]))] = int(_plain(row["version"]))
        self.loaded_collections = {k: (n, self.collection_versions[k]) for k, n in self.collection_names.items()}
        prov = self.store.select(
            f"""SELECT ?g ?act ?modified WHERE {{ GRAPH {PROVENANCE} {{
                  ?g prov:wasGeneratedBy ?act . OPTIONAL {{ ?g dcterms:modified ?modified }} }} }}""")
        watched = {g.value for g in WATCHED}
        for row in prov:
            g = row["g"].value  # type: ignore[union-attr]
            if g in watched:
                self.graph_activity[g] = row["act"].value  # type: ignore[union-attr]
                moment = parse_time(str(_plain(row["modified"]))) if row["modified"] else None
                if moment:
                    self.graph_times[g] = moment

    def _states(self, *, keys: Iterable[str] = (), papers: Iterable[NamedNode] = (), note_keys: Iterable[str] = (),
                everything: bool = False) -> list[State]:
        """Item sync states of this library: by item key, by paper, by child-note key, or all.
        The selective pattern comes first, so a lookup costs what it finds, not the library."""
        lib = text(self.libname, None)
        lookups: list[tuple[str, list[Any]]] = []
        if everything:
            lookups.append((f"?state tkg:library {lib} .", []))
        if keys:
            lookups.append(("", [_state_node(self.library, "item", k) for k in keys]))
        if papers:
            lookups.append((f"?state tkg:paper ?paper ; tkg:library {lib} .", list(papers)))
        if note_keys:
            lookups.append(("?state tkg:noteKey ?nk .", [text(k, None) for k in note_keys]))
        out: dict[str, State] = {}
        for pattern, terms in lookups:
            var = "nk" if "?nk" in pattern else "paper" if "?paper" in pattern else "state"
            for chunk in (list(_chunked(terms, 400)) if terms else [[]]):
                values = _values(var, chunk) if chunk else ""
                rows = self.store.select(
                    f"""SELECT ?key ?paper ?version ?base ?remote ?authored WHERE {{ GRAPH {ZOTERO_SYNC} {{
                          {values} {pattern} ?state tkg:zoteroKey ?key ; tkg:paper ?paper ; tkg:itemVersion ?version ;
                            tkg:baseRecord ?base ; tkg:remoteRecord ?remote ; tkg:authoredRecord ?authored }} }}""")
                for row in rows:
                    key = str(_plain(row["key"]))
                    if key in out:
                        continue
                    out[key] = State(
                        key=key, paper=row["paper"], version=int(_plain(row["version"])),  # type: ignore[arg-type]
                        base=Record.from_json(json.loads(str(_plain(row["base"])))),
                        remote=Remote.from_json(str(_plain(row["remote"]))),
                        authored=json.loads(str(_plain(row["authored"]))))
        return list(out.values())

    def _entry(self, paper: NamedNode) -> Entry:
        entry = self.entries.get(paper.value)
        if entry is None:
            entry = self.entries[paper.value] = Entry(paper)
        return entry

    def _link(self, entry: Entry, key: str) -> None:
        entry.key = key
        self.by_key[key] = entry

    def _adopt(self, state: State) -> Entry:
        entry = self.by_key.get(state.key) or self._entry(state.paper)
        if entry.state is None:
            entry.state = state
            self._link(entry, state.key)
            if entry.remote is None:
                entry.remote = Remote.from_json(state.remote.to_json())
        return entry

    # -- Zotero side -------------------------------------------------------------------

    def _take_collections(self, changes: Changes) -> None:
        for key, obj in changes.collections.items():
            name = str(obj.get("data", obj).get("name", ""))
            if self.collection_names.get(key) != name:
                self.collections_changed = True
            self.collection_names[key] = name
            self.collection_versions[key] = int(obj.get("version", 0))
        for key in changes.deleted_collections:
            if key in self.collection_names:
                self.collections_changed = True
            self.collection_names.pop(key, None)
            self.collection_versions.pop(key, None)

    def _take_zotero_changes(self, changes: Changes) -> None:
        items = [parse_item(obj) for obj in changes.items.values()]
        regular = [i for i in items if i.is_regular]
        notes = [i for i in items if i.is_note and i.parent]
        known = {k for k in self.by_key}
        wanted = ({i.key for i in regular} | {n.parent for n in notes if n.parent} | set(changes.deleted_items)) - known
        states = {s.key: s for s in self._states(keys=sorted(wanted))} if wanted else {}
        orphan_deleted = [k for k in changes.deleted_items if k not in states and k not in known]
        owners = self._states(note_keys=orphan_deleted) if orphan_deleted else []
        for state in [*states.values(), *owners]:
            self._adopt(state)
        fresh: list[ZoteroItem] = []
        for item in regular:
            entry = self.by_key.get(item.key)
            if entry is not None:
                entry.remote = Remote.from_item(item, entry.remote)
                entry.gone = False
                entry.touched = True
            else:
                fresh.append(item)
        if fresh:
            self._map_new_items(fresh)
        for note in sorted(notes, key=lambda n: n.key):
            parent = self.by_key.get(note.parent or "")
            if parent is None or parent.remote is None:
                continue
            self._take_note(parent, note)
        for key in changes.deleted_items:
            entry = self.by_key.get(key)
            if entry is not None and entry.key == key and entry.remote is not None:
                entry.remote.present = False
                entry.gone = True
                entry.touched = True
                continue
            for owner in self.by_key.values():
                if owner.remote is not None:
                    iri = owner.remote.note_iri_for_key(key)
                    if iri is not None:
                        owner.touched = True
                        owner.remote.notes.pop(iri, None)
                        owner.remote.note_keys.pop(iri, None)
                        owner.remote.note_modified.pop(iri, None)

    def _take_note(self, parent: Entry, note: ZoteroItem) -> None:
        remote = parent.remote
        assert remote is not None
        parent.touched = True
        iri = remote.note_iri_for_key(note.key)
        if iri is None:
            iri = self._pending_note_for(parent, note.note) or note_iri(self.library, note.key).value
        if note.trashed:
            remote.notes.pop(iri, None)
            remote.note_keys.pop(iri, None)
            remote.note_modified.pop(iri, None)
            return
        remote.notes[iri] = note.note
        remote.note_keys[iri] = note.key
        if note.modified:
            remote.note_modified[iri] = note.modified.isoformat()

    def _pending_note_for(self, parent: Entry, text_: str) -> str | None:
        """A graph note of ``parent`` not yet in Zotero whose text is ``text_`` (a note
        written by an earlier, interrupted write)."""
        keyed = set(parent.remote.note_keys) if parent.remote else set()
        candidates: dict[str, str] = {}
        if parent.merged is not None:
            candidates.update(parent.merged.result.note_map)
        if parent.view is not None:
            candidates.update(parent.view.z_notes)
        for iri, body in sorted(candidates.items()):
            if iri not in keyed and body == text_:
                return iri
        return None

    def _existing_papers(self, items: list[ZoteroItem]) -> Callable[[str | None, str | None], NamedNode | None]:
        arxiv_ids = sorted({i.arxiv for i in items if i.arxiv})
        dois = sorted({i.doi for i in items if i.doi})
        by_arxiv: dict[str, NamedNode] = {}
        by_doi: dict[str, NamedNode] = {}
        for chunk in _chunked(arxiv_ids, 400):
            block = _values("id", [text(a, None) for a in chunk])
            for row in self.store.select(f"SELECT ?id ?paper WHERE {{ {block} ?paper tkg:arxivId ?id }}"):
                by_arxiv.setdefault(str(_plain(row["id"])), row["paper"])  # type: ignore[arg-type]
        if dois:
            wanted = set(dois)
            for row in self.store.select("SELECT ?paper ?doi WHERE { ?paper bibo:doi ?doi }"):
                value = str(_plain(row["doi"])).strip().lower()
                if value in wanted:
                    by_doi.setdefault(value, row["paper"])  # type: ignore[arg-type]

        def lookup(arxiv: str | None, doi: str | None) -> NamedNode | None:
            return (by_arxiv.get(arxiv) if arxiv else None) or (by_doi.get(doi) if doi else None)

        return lookup

    def _map_new_items(self, fresh: list[ZoteroItem]) -> None:
        lookup = self._existing_papers(fresh)
        papers = {item.key: paper_iri_for(item, self.library, lookup) for item in fresh}
        distinct = list({p.value: p for p in papers.values()}.values())
        linked = {s.paper.value: s.key for s in self._states(papers=distinct)}
        for item in sorted(fresh, key=lambda i: (i.modified or dt.datetime.min.replace(tzinfo=dt.UTC), i.key)):
            paper = papers[item.key]
            entry = self.entries.get(paper.value)
            other = (entry.key if entry is not None and entry.key else None) or linked.get(paper.value)
            if other is not None and other != item.key and not (entry is not None and entry.gone):
                if item.key not in self.seen_duplicates:
                    self.seen_duplicates.add(item.key)
                    self.report.duplicates.append(
                        f"{item.key} ({item.title or 'untitled'}) is the same paper as item {other}; "
                        "it was left out of the sync")
                continue
            if entry is not None and entry.gone and entry.key:
                self.by_key.pop(entry.key, None)
                entry.state = None
                entry.gone = False
            entry = self._entry(paper)
            self._link(entry, item.key)
            entry.remote = Remote.from_item(item, None)
            entry.touched = True

    # -- graph side -----------------------------------------------------------------------

    def _graph_snapshot(self) -> dict[str, str]:
        return {g.value: self.graph_activity.get(g.value, "") for g in WATCHED}

    def _take_graph_changes(self, *, full: bool) -> None:
        changed = self._graph_snapshot() != self.snapshot
        if not (changed or full or self.collections_changed):
            return
        for state in self._states(everything=True):
            self._adopt(state)
        scope = set(self._status_papers())
        for entry in self.entries.values():
            scope.add(entry.paper.value)
        self._load_views([NamedNode(p) for p in sorted(scope)])
        # Entries that neither side changed since the last sync drop out again.
        for entry in list(self.entries.values()):
            if entry.state is None or entry.touched or entry.gone:
                continue
            base = entry.state.base
            if self._graph_record(entry) == base and self._zotero_record(entry) == base:
                self._drop(entry)
        if not self.options.create_items or self.options.direction == "pull":
            for entry in list(self.entries.values()):
                if entry.key is None:
                    self._drop(entry)

    def _drop(self, entry: Entry) -> None:
        self.entries.pop(entry.paper.value, None)
        if entry.key:
            self.by_key.pop(entry.key, None)

    def _status_papers(self) -> list[str]:
        rows = self.store.select(f"SELECT ?paper WHERE {{ GRAPH {READING} {{ ?paper tkg:readingStatus ?s }} }}")
        return [row["paper"].value for row in rows]  # type: ignore[union-attr]

    def _load_views(self, papers: list[NamedNode] | None = None) -> None:
        wanted = papers if papers is not None else [e.paper for e in self.entries.values() if e.view is None]
        views = {p.value: GraphView(p) for p in wanted}
        for chunk in _chunked(wanted, 500):
            block = _values("paper", chunk)
            statuses: dict[str, tuple[NamedNode, str | None]] = {}
            for row in self.store.select(
                    f"""SELECT ?paper ?s (MAX(?t) AS ?at) WHERE {{ GRAPH {READING} {{ {block}
                          ?paper tkg:readingStatus ?s OPTIONAL {{ ?paper tkg:statusChangedAt ?t }} }} }}
                        GROUP BY ?paper ?s"""):
                statuses[row["paper"].value] = (row["s"], str(_plain(row["at"])) if row["at"] else None)  # type: ignore[union-attr,assignment]
            custom = {s.value: s for s, _at in statuses.values() if s.value.rsplit("/", 1)[1] not in KNOWN_STATUSES}
            labels: dict[str, str] = {}
            for part in _chunked(list(custom.values()), 500):
                for row in self.store.select(f"SELECT ?s ?l WHERE {{ {_values('s', part)} ?s skos:prefLabel ?l }}"):
                    labels.setdefault(row["s"].value, str(_plain(row["l"])))  # type: ignore[union-attr]
            for value, (status, at) in statuses.items():
                view = views[value]
                slug = status.value.rsplit("/", 1)[1]
                view.status = slug if slug in KNOWN_STATUSES else labels.get(status.value, slug)
                view.status_at = parse_time(at)
            titles: dict[str, dict[str, list[str]]] = {}
            for row in self.store.select(
                    f"""SELECT ?paper ?g ?title WHERE {{ {block} GRAPH ?g {{ ?paper dcterms:title ?title }}
                          FILTER(?g = {CATALOG} || ?g = {READING_LIST}) }}"""):
                per = titles.setdefault(row["paper"].value, {})  # type: ignore[union-attr]
                per.setdefault(row["g"].value, []).append(str(_plain(row["title"])))  # type: ignore[union-attr]
            for value, per in titles.items():
                chosen = per.get(CATALOG.value) or per.get(READING_LIST.value) or []
                views[value].auth_title = min(chosen) if chosen else None
            for row in self.store.select(
                    f"""SELECT ?paper ?label WHERE {{ {block} GRAPH {READING_LIST} {{ ?paper tkg:readingCategory ?c }}
                          ?c skos:prefLabel ?label }}"""):
                view = views[row["paper"].value]  # type: ignore[union-attr]
                view.auth_categories = view.auth_categories | {str(_plain(row["label"]))}
            for row in self.store.select(
                    f"""SELECT ?paper ?p ?o ?label WHERE {{ {block} GRAPH {ZOTERO} {{ ?paper ?p ?o }}
                          FILTER(?p IN (dcterms:title, tkg:tag, tkg:readingCategory, tkg:zoteroItem))
                          OPTIONAL {{ ?o skos:prefLabel ?label }} }}"""):
                view = views[row["paper"].value]  # type: ignore[union-attr]
                predicate = row["p"]
                if predicate == TKG.zoteroItem:
                    view.linked = True
                elif predicate == DCTERMS.title:
                    view.z_title = min(filter(None, [view.z_title, str(_plain(row["o"]))]))
                elif predicate == TKG.tag:
                    view.z_tags = view.z_tags | {str(_plain(row["o"]))}
                elif predicate == TKG.readingCategory and row["label"] is not None:
                    view.z_categories = view.z_categories | {str(_plain(row["label"]))}
            # The graph's notes: Zotero's copies, with the reader's texts and deletions over them (kg.notes).
            for value, notes in synced_notes(self.store, chunk).items():
                view = views[value]
                view.notes, view.z_notes, view.z_note_modified = notes, notes.shown, dict(notes.modified)
        for view in views.values():
            self._entry(view.paper).view = view

    def _graph_record(self, entry: Entry) -> Record | None:
        view = entry.view
        if view is None or not view.exists:
            return None
        authored = entry.state.authored if entry.state is not None else None
        has_z = view.linked or view.z_title is not None
        if not has_z:
            title, categories = view.auth_title, view.auth_categories
        elif authored is None:
            title, categories = view.z_title or view.auth_title, view.z_categories
        else:
            old_cats = frozenset(authored.get("categories") or [])
            title = view.z_title
            if view.auth_title and view.auth_title != authored.get("title"):
                title = view.auth_title
            categories = (view.z_categories | (view.auth_categories - old_cats)) - (old_cats - view.auth_categories)
        if not title and entry.state is not None:
            title = entry.state.base.title
        return Record.make(title=title, status=view.status, tags=view.z_tags, categories=categories,
                           notes=view.z_notes)

    def _graph_stamps(self, entry: Entry) -> Stamps:
        view = entry.view
        authored = entry.state.authored if entry.state is not None else None
        z_time = self.graph_times.get(ZOTERO.value)
        auth_time = max((self.graph_times[g.value] for g in (CATALOG, READING_LIST) if g.value in self.graph_times),
                        default=None)
        item_time = z_time
        if view is not None and (authored is None or view.auth_title != authored.get("title")
                                 or sorted(view.auth_categories) != sorted(authored.get("categories") or [])):
            item_time = auth_time or z_time
        notes = dict(view.z_note_modified) if view is not None else {}
        return Stamps(status=view.status_at if view else None, item=item_time, notes=notes)

    # -- Zotero records ------------------------------------------------------------------

    def _label(self, collection_key: str) -> str | None:
        name = self.collection_names.get(collection_key)
        if name is None:
            return None
        return self.to_graph_label.get(name, name)

    def _zotero_status(self, remote: Remote, base: Record | None) -> str | None:
        fmt = self.options.status_format
        if fmt == "extra":
            return remote.extra_status
        if fmt == "tags":
            return remote.tag_status
        if remote.extra_status == remote.tag_status:
            return remote.extra_status
        old = base.status if base is not None else None
        if remote.extra_status == old and remote.tag_status is not None:
            return remote.tag_status
        return remote.extra_status if remote.extra_status is not None else remote.tag_status

    def _zotero_record(self, entry: Entry) -> Record | None:
        remote = entry.remote
        if remote is None:
            return None
        base = entry.state.base if entry.state is not None else None
        labels = {self._label(k) for k in remote.collections}
        return Record.make(present=remote.present, title=remote.title or None,
                           status=self._zotero_status(remote, base), tags=remote.tags,
                           categories={label for label in labels if label}, notes=remote.notes)

    def _zotero_stamps(self, entry: Entry) -> Stamps:
        remote = entry.remote
        if remote is None:
            return Stamps()
        modified = parse_time(remote.modified)
        from_extra = self.options.status_format != "tags" and remote.extra_status is not None
        status_at = parse_time(remote.extra_status_at) if from_extra else None
        notes = {iri: m for iri, raw in remote.note_modified.items() if (m := parse_time(raw))}
        return Stamps(status=status_at or modified, item=modified, notes=notes)

    # -- merging --------------------------------------------------------------------------

    def _merge(self, entry: Entry) -> None:
        graph = self._graph_record(entry)
        zotero = self._zotero_record(entry)
        entry.graph_record, entry.zotero_record = graph, zotero
        if graph is None and zotero is None:
            entry.merged = None
            return
        base = entry.state.base if entry.state is not None else None
        merged = merge(base, graph, zotero, rule=self.options.conflict, graph_stamps=self._graph_stamps(entry),
                       zotero_stamps=self._zotero_stamps(entry), resolve=self.options.direction == "both")
        entry.merged = merged
        for conflict in merged.conflicts:
            if not any(c.field == conflict.field and c.losing_value == conflict.losing_value for c in entry.conflicts):
                entry.conflicts.append(conflict)

    def _conflict_records(self) -> list[ConflictRecord]:
        out = []
        for entry in self.entries.values():
            for c in entry.conflicts:
                out.append(ConflictRecord(entry.paper.value, entry.title, entry.key or "", c.field, c.base, c.graph,
                                          c.zotero, c.winner, c.rule))
        return sorted(out, key=lambda c: (c.title, c.field))

    # -- the plan ------------------------------------------------------------------------

    def _plan(self) -> list[Change]:
        out: list[Change] = []
        names_needed = self._collection_names_needed()
        for name in sorted(names_needed - set(self.collection_names.values())):
            out.append(Change("zotero", "create", "collection", name))
        for entry in sorted(self.entries.values(), key=lambda e: e.title):
            if entry.merged is None:
                continue
            result = entry.merged.result
            title, key, paper = entry.title, entry.key or "", entry.paper.value
            graph = entry.graph_record
            if not result.present:
                on_list = entry.view is not None and (entry.view.status or entry.view.linked)
                if graph is not None and graph.present and on_list:
                    out.append(Change("graph", "delete", "paper", title, key, paper))
            elif graph is None:
                out.append(Change("graph", "create", "paper", title, key, paper, tuple(
                    f for f in ("title", "status", "tags", "categories") if result.value(f))))
            else:
                fields = tuple(entry.merged.to_graph(graph))
                if fields:
                    out.append(Change("graph", "update", "paper", title, key, paper, fields))
            if self.options.direction != "both":
                continue
            zotero = entry.zotero_record
            if result.present and (entry.key is None or entry.gone):
                out.append(Change("zotero", "create", "item", title, "", paper, tuple(
                    f for f in ("title", "status", "tags", "categories") if result.value(f))
                    + tuple(f"note:{n}" for n in result.note_map)))
            elif zotero is not None and result.present and not zotero.present:
                out.append(Change("zotero", "restore", "item", title, key, paper,
                                  tuple(f for f in entry.merged.to_zotero(zotero) if f != "present")))
            elif zotero is not None and not result.present and zotero.present:
                out.append(Change("zotero", "trash", "item", title, key, paper))
            elif zotero is not None and result.present:
                fields = tuple(entry.merged.to_zotero(zotero))
                if fields:
                    out.append(Change("zotero", "update", "item", title, key, paper, fields))
        return out

    # -- writing to Zotero ------------------------------------------------------------------

    def _collection_names_needed(self) -> set[str]:
        names: set[str] = set()
        for entry in self.entries.values():
            if entry.merged is not None and entry.merged.result.present:
                for label in entry.merged.result.categories:
                    names.add(self.to_zotero_name.get(label, label))
        return names

    def _collection_key(self, name: str) -> str | None:
        keys = sorted(k for k, n in self.collection_names.items() if n == name)
        return keys[0] if keys else None

    def _push(self) -> None:
        attempts = 0
        while True:
            self._journal()
            try:
                self._push_collections()
                self._push_items(notes=False)
                self._push_items(notes=True)
                return
            except PreconditionFailed as exc:
                attempts += 1
                if attempts >= self.options.max_attempts:
                    raise SyncError(f"Zotero kept refusing writes to {self.libname}: {exc.message}",
                                    hint="Another client keeps writing to the library; run the sync again "
                                         "later. The graph was not changed.") from None
                self.report.recoveries += 1
                self._recover()
            except TooLarge:
                attempts += 1
                if self.batch == 1 or attempts >= self.options.max_attempts:
                    raise SyncError("Zotero refused even a one-object write as too large",
                                    hint="Check the server's limits; the graph was not changed.") from None
                self.batch = max(1, self.batch // 2)

    def _recover(self) -> None:
        """After a 412/428: read what changed since the last version we knew, take it in,
        and merge again; what we wrote ourselves comes back equal to what we meant."""
        changes = self.api.read_changes(self.known_version)
        self.known_version = changes.version
        self._take_collections(changes)
        self._take_zotero_changes(changes)
        self._load_views()
        for entry in self.entries.values():
            self._merge(entry)

    def _push_collections(self) -> None:
        missing = sorted(self._collection_names_needed() - set(self.collection_names.values()))
        for chunk in _chunked(missing, self.batch):
            result = self.api.write("collections", [{"name": name} for name in chunk], version=self.known_version,
                                    write_token=uuid.uuid4().hex)
            self.known_version = result.version
            for index, obj in result.successful.items():
                key = str(obj.get("key") or obj.get("data", {}).get("key"))
                self.collection_names[key] = chunk[index]
                self.collection_versions[key] = int(obj.get("version", result.version))
            for index, failure in result.failed.items():
                if int(failure.get("code", 0)) == 412:
                    raise PreconditionFailed(str(failure.get("message")), status=412)
                self.report.failed.append((f"collection {chunk[index]}", str(failure.get("message"))))

    def _push_items(self, *, notes: bool) -> None:
        ops = self._note_ops() if notes else self._item_ops()
        for chunk in _chunked(ops, self.batch):
            creates = any(op[1] == "create" for op in chunk)
            result = self.api.write("items", [op[2] for op in chunk], version=self.known_version,
                                    write_token=uuid.uuid4().hex if creates else None)
            self.known_version = result.version
            precondition: str | None = None
            for index, op in enumerate(chunk):
                entry, action = op[0], op[1]
                if index in result.successful:
                    self._applied(op, result.successful[index])
                elif index in result.unchanged:
                    self._applied(op, None)
                elif index in result.failed:
                    failure = result.failed[index]
                    if int(failure.get("code", 0)) in (412, 428):
                        precondition = str(failure.get("message"))
                        continue
                    entry.failed = f"{action} refused ({failure.get('code')}): {failure.get('message')}"
                    self.report.failed.append((entry.title, entry.failed))
            if precondition is not None:
                raise PreconditionFailed(precondition, status=412)

    def _item_ops(self) -> list[tuple[Entry, str, dict[str, Any], str | None]]:
        ops: list[tuple[Entry, str, dict[str, Any], str | None]] = []
        entries = [e for e in sorted(self.entries.values(), key=lambda e: e.paper.value)
                   if e.merged is not None and not e.failed]
        new = [e for e in entries if (e.key is None or e.gone) and e.merged is not None and e.merged.result.present]
        infos = self._biblio([e.paper for e in new]) if new else {}
        for entry in entries:
            if entry.key is None or entry.gone:
                if entry.paper.value in infos:
                    ops.append((entry, "create", self._new_item(entry, infos[entry.paper.value]), None))
                continue
            payload = self._item_changes(entry)
            if payload:
                ops.append((entry, "update", {"key": entry.key, **payload}, None))
        return ops

    def _note_ops(self) -> list[tuple[Entry, str, dict[str, Any], str | None]]:
        ops: list[tuple[Entry, str, dict[str, Any], str | None]] = []
        for entry in sorted(self.entries.values(), key=lambda e: e.paper.value):
            if entry.merged is None or entry.failed or entry.key is None or entry.remote is None:
                continue
            if not entry.merged.result.present or not entry.remote.present:
                continue
            wanted = entry.merged.result.note_map
            have = entry.remote.notes
            for iri, body in sorted(wanted.items()):
                if iri not in have:
                    ops.append((entry, "create", {"itemType": "note", "parentItem": entry.key, "note": body}, iri))
                elif have[iri] != body:
                    ops.append((entry, "update", {"key": entry.remote.note_keys[iri], "note": body}, iri))
            for iri in sorted(set(have) - set(wanted)):
                key = entry.remote.note_keys.get(iri)
                if key:
                    ops.append((entry, "trash", {"key": key, "deleted": 1}, iri))
        return ops

    def _applied(self, op: tuple[Entry, str, dict[str, Any], str | None], obj: Mapping[str, Any] | None) -> None:
        entry, action, payload, note = op
        if note is not None:
            remote = entry.remote
            assert remote is not None
            if action == "trash":
                remote.notes.pop(note, None)
                remote.note_keys.pop(note, None)
                remote.note_modified.pop(note, None)
                return
            remote.notes[note] = payload["note"]
            if obj is not None:
                remote.note_keys[note] = str(obj["key"])
                parsed = parse_item(obj)
                if parsed.modified:
                    remote.note_modified[note] = parsed.modified.isoformat()
            return
        if obj is None:
            assert entry.remote is not None
            self._assume_written(entry.remote, payload)
            return
        item = parse_item(obj)
        previous = entry.remote if action == "update" else None
        if entry.key and entry.key != item.key:
            self.by_key.pop(entry.key, None)
        self._link(entry, item.key)
        entry.gone = False
        entry.remote = Remote.from_item(item, previous)

    def _assume_written(self, remote: Remote, payload: Mapping[str, Any]) -> None:
        """An ``unchanged`` answer: Zotero already holds what was sent."""
        obj = {"key": remote.key, "version": remote.version, "itemType": remote.item_type, "title": remote.title,
               "tags": [{"tag": t} for t in remote.tags + remote.status_tags], "collections": remote.collections,
               "extra": "\n".join(remote.extra_rest), **payload}
        item = parse_item(obj)
        remote.title, remote.tags, remote.status_tags = item.title, item.tags, item.status_tags
        remote.collections, remote.extra_rest = item.collections, item.extra_rest
        if "extra" in payload:
            remote.extra_status = item.extra_status
            remote.extra_status_at = item.extra_status_at.isoformat() if item.extra_status_at else None
        remote.tag_status = item.tag_status
        if "deleted" in payload:
            remote.present = not payload["deleted"]

    def _collection_keys(self, labels: Iterable[str]) -> list[str]:
        keys = []
        for label in sorted(labels):
            key = self._collection_key(self.to_zotero_name.get(label, label))
            if key:
                keys.append(key)
        return keys

    def _item_changes(self, entry: Entry) -> dict[str, Any]:
        """The fields to send so that Zotero holds the merged record (PATCH semantics)."""
        assert entry.merged is not None and entry.remote is not None
        result, remote = entry.merged.result, entry.remote
        zotero = self._zotero_record(entry)
        assert zotero is not None
        changed = set(result.changed_fields(zotero))
        payload: dict[str, Any] = {}
        if "present" in changed:
            payload["deleted"] = 0 if result.present else 1
        if not result.present:
            return payload
        if "title" in changed and result.title:
            payload["title"] = result.title
        fmt = self.options.status_format
        status_changed = "status" in changed
        if status_changed and fmt in ("extra", "both"):
            payload["extra"] = format_extra(remote.extra_rest, result.status, self._status_time(entry))
        status_tags = remote.status_tags
        if status_changed and fmt in ("tags", "both"):
            status_tags = [status_tag(result.status)] if result.status else []
        if "tags" in changed or status_tags != remote.status_tags:
            payload["tags"] = [{"tag": t} for t in sorted(result.tags)] + [{"tag": t} for t in status_tags]
        if "categories" in changed:
            keep = [k for k in remote.collections if self._label(k) is None]
            payload["collections"] = keep + self._collection_keys(result.categories)
        return payload

    def _status_time(self, entry: Entry) -> dt.datetime:
        view = entry.view
        if view is not None and view.status_at is not None and entry.merged is not None \
                and view.status == entry.merged.result.status:
            return view.status_at
        return self.now

    def _biblio(self, papers: list[NamedNode]) -> dict[str, dict[str, Any]]:
        """What a new Zotero item needs to know about each paper: identifiers, date, venue,
        types and creators in order (the author list if the graph has one). Three queries per
        500 papers."""
        names = {TKG.arxivId.value: "arxiv", BIBO.doi.value: "doi", FOAF.page.value: "url",
                 DCTERMS.issued.value: "date", TKG.venue.value: "venue"}
        infos: dict[str, dict[str, Any]] = {p.value: {"types": set(), "creators": []} for p in papers}
        ordered: dict[str, dict[str, tuple[int, str, bool]]] = {p.value: {} for p in papers}
        groups = (FOAF.Group, FOAF.Organization)
        for chunk in _chunked(papers, 500):
            block = _values("paper", chunk)
            for row in self.store.select(
                    f"""SELECT ?paper ?p ?o WHERE {{ {block} ?paper ?p ?o
                          FILTER(?p IN (tkg:arxivId, bibo:doi, foaf:page, dcterms:issued, tkg:venue, rdf:type)) }}
                        ORDER BY ?paper ?p ?o"""):
                info, p, o = infos[row["paper"].value], row["p"], row["o"]  # type: ignore[union-attr]
                if p == RDF.type:
                    info["types"].add(o)
                elif isinstance(p, NamedNode):
                    info.setdefault(names[p.value], o.value if isinstance(o, NamedNode) else str(_plain(o)))
            for query, listed in (
                    (f"""SELECT ?paper ?agent ?name ?member ?kind WHERE {{ {block} ?paper bibo:authorList ?list .
                           ?list ?member ?agent . FILTER(STRSTARTS(STR(?member), STR(rdf:_)))
                           ?agent foaf:name ?name OPTIONAL {{ ?agent a ?kind }} }}""", True),
                    (f"""SELECT ?paper ?agent ?name ?kind WHERE {{ {block} ?paper dcterms:creator ?agent .
                           ?agent foaf:name ?name OPTIONAL {{ ?agent a ?kind }} }} ORDER BY ?paper ?agent""", False)):
                for row in self.store.select(query):
                    paper = row["paper"].value  # type: ignore[union-attr]
                    if not listed and any(pos for pos, _n, _g in ordered[paper].values()):
                        continue  # the ordered author list wins over unordered creators
                    position = int(row["member"].value.rsplit("_", 1)[1]) if listed else 0  # type: ignore[union-attr]
                    agent = row["agent"].value  # type: ignore[union-attr]
                    old = ordered[paper].get(agent)
                    ordered[paper][agent] = (position, str(_plain(row["name"])),
                                             row["kind"] in groups or bool(old and old[2]))
        for paper in papers:
            info = infos[paper.value]
            info["creators"] = [(name, group) for _pos, name, group in sorted(ordered[paper.value].values())]
            if "arxiv" not in info and paper.value.startswith("https://arxiv.org/abs/"):
                info["arxiv"] = paper.value.removeprefix("https://arxiv.org/abs/")
            if "doi" not in info and paper.value.startswith("https://doi.org/"):
                info["doi"] = paper.value.removeprefix("https://doi.org/")
        return infos

    def _new_item(self, entry: Entry, info: dict[str, Any]) -> dict[str, Any]:
        """A Zotero item for a paper the graph has: the right type, title, creators, date,
        URL, DOI and arXiv id, and the merged status, tags and collections."""
        assert entry.merged is not None
        result = entry.merged.result
        item_type = _item_type(info)
        arxiv, doi, venue = info.get("arxiv"), info.get("doi"), str(info.get("venue") or "")
        url = info.get("url") or (f"https://arxiv.org/abs/{arxiv}" if arxiv else "")
        rest: list[str] = []
        payload: dict[str, Any] = {"itemType": item_type, "title": result.title or entry.title}
        payload["creators"] = [_creator(name, group, item_type) for name, group in info["creators"]]
        if info.get("date"):
            payload["date"] = str(info["date"])
        if url:
            payload["url"] = url
        if item_type in ("preprint", "journalArticle", "conferencePaper"):
            if doi:
                payload["DOI"] = doi
        elif doi:
            rest.append(f"DOI: {doi}")
        if item_type == "preprint" and arxiv:
            payload["archiveID"] = f"arXiv:{arxiv}"
            payload["repository"] = "arXiv"
        elif arxiv:
            rest.append(f"arXiv: {arxiv}")
        venue_field = {"journalArticle": "publicationTitle", "conferencePaper": "proceedingsTitle",
                       "blogPost": "blogTitle", "webpage": "websiteTitle", "report": "institution"}.get(item_type)
        if venue_field and venue:
            payload[venue_field] = venue
        derived = None
        if arxiv:
            try:
                derived = parse_arxiv_id(arxiv).iri
            except ValueError:
                derived = None
        if derived is None and doi:
            derived = NamedNode("https://doi.org/" + doi.lower())
        if derived != entry.paper:
            rest.append(f"{TECHKG_ID}: {entry.paper.value}")
        fmt = self.options.status_format
        status_tags: list[str] = []
        if fmt in ("tags", "both") and result.status:
            status_tags = [status_tag(result.status)]
        payload["extra"] = format_extra(rest, result.status if fmt in ("extra", "both") else None,
                                        self._status_time(entry))
        payload["tags"] = [{"tag": t} for t in sorted(result.tags)] + [{"tag": t} for t in status_tags]
        payload["collections"] = self._collection_keys(result.categories)
        return payload

    # -- writing the graph -----------------------------------------------------------------

    def _commit(self, changes: Changes) -> None:
        nothing = (not self.entries and changes.version == self.watermark and not self.collections_changed
                   and self._graph_snapshot() == self.snapshot)
        if nothing:
            return
        stats = self.report.counts()
        activity = Activity(f"kg sync zotero {self.libname}" if self.options.direction == "both"
                            else f"kg ingest zotero {self.libname}", used=[self.api.source_url],
                            stats={"added": stats["graph_created"], "updated": stats["graph_updated"],
                                   "failed": stats["failed"]})
        defined = self._defined_categories()
        categories: set[str] = set()
        zotero_triples: list[Triple] = []
        state_triples: list[Triple] = []
        with self.store.transaction(activity) as tx:
            for entry in sorted(self.entries.values(), key=lambda e: e.paper.value):
                self._write_entry(tx, entry, categories, zotero_triples, state_triples)
            if READING in tx.touched:
                tx.insert(READING, known_status_triples())
            for label in sorted(categories):
                node = _category_iri(label)
                zotero_triples += [Triple(node, RDF.type, SKOS.Concept),
                                   Triple(node, RDF.type, TKG.ReadingListCategory),
                                   Triple(node, SKOS.inScheme, READING_SCHEME)]
                if node.value not in defined:
                    zotero_triples.append(Triple(node, SKOS.prefLabel, text(label, None)))
            # One INSERT per graph, after every per-paper DELETE above.
            tx.insert(ZOTERO, zotero_triples)
            tx.insert(ZOTERO_SYNC, state_triples)
            self._write_conflicts(tx, self._conflict_records())
            self._write_collections(tx)
            self._write_library(tx, activity)
        self.report.graph_written = bool(tx.touched)

    def _defined_categories(self) -> set[str]:
        rows = self.store.select(
            f"""SELECT DISTINCT ?c WHERE {{ GRAPH ?g {{ ?c a tkg:ReadingListCategory ; skos:prefLabel ?l }}
                  FILTER(?g != {ZOTERO}) }}""")
        return {row["c"].value for row in rows}  # type: ignore[union-attr]

    def _write_entry(self, tx: Transaction, entry: Entry, categories: set[str], zotero_triples: list[Triple],
                     state_triples: list[Triple]) -> None:
        merged, view = entry.merged, entry.view
        if merged is None:
            return
        if entry.key is None:
            return  # not in Zotero (a failed creation, or a pull): nothing to record yet
        result = merged.result
        paper = entry.paper
        graph_status = view.status if view is not None else None
        had_z = view is not None and (view.linked or view.z_title is not None or bool(view.z_notes))
        if not result.present:
            if graph_status is not None:
                status_removal(tx, paper, previous=graph_status, via="zotero", at=self.now)
            if had_z:
                self._drop_z(tx, paper)
            state = _state_node(self.library, "item", entry.key)
            tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO_SYNC} {{ {state} ?p ?o }} }}", touches=[ZOTERO_SYNC])
            return
        if result.status != graph_status:
            if result.status is None:
                if graph_status is not None:
                    status_removal(tx, paper, previous=graph_status, via="zotero", at=self.now)
            else:
                at = self._zotero_stamps(entry).status or self.now
                status_change(tx, paper, result.status, previous=graph_status, via="zotero", at=at,
                              first_seen=graph_status is None)
        settle_notes(tx, paper, view.notes if view is not None else None, result.note_map, at=self.now)
        if had_z:
            self._drop_z(tx, paper)
        zotero_triples += self._z_block(entry, categories)
        state_triples += self._state_triples(tx, entry)

    def _drop_z(self, tx: Transaction, paper: NamedNode) -> None:
        """Remove the paper's block of the ``zotero`` graph (this library's item node
        included; other libraries' item nodes stay)."""
        lib = text(self.libname, None)
        tx.update(
            f"""DELETE {{ GRAPH {ZOTERO} {{ {paper} tkg:zoteroItem ?item . ?item ?p ?o }} }}
                WHERE {{ GRAPH {ZOTERO} {{ {paper} tkg:zoteroItem ?item . ?item tkg:library {lib} ; ?p ?o }} }} ;
                DELETE {{ GRAPH {ZOTERO} {{ {paper} ?p ?o }} }} WHERE {{ GRAPH {ZOTERO} {{ {paper} ?p ?o }}
                  FILTER(?p != tkg:zoteroItem) }} ;
                DELETE WHERE {{ GRAPH {ZOTERO} {{ ?note tkg:noteOf {paper} ; ?p ?o }} }}""", touches=[ZOTERO])

    def _z_block(self, entry: Entry, categories: set[str]) -> list[Triple]:
        assert entry.merged is not None and entry.remote is not None and entry.key is not None
        result, remote, paper = entry.merged.result, entry.remote, entry.paper
        out = [Triple(paper, RDF.type, BIBO.Document)]
        out += [Triple(paper, RDF.type, cls) for cls in _classes(remote.item_type)]
        if result.title:
            out.append(Triple(paper, DCTERMS.title, text(result.title, None)))
        out += [Triple(paper, TKG.tag, text(t, None)) for t in sorted(result.tags)]
        for label in sorted(result.categories):
            categories.add(label)
            out.append(Triple(paper, TKG.readingCategory, _category_iri(label)))
        notes = result.note_map
        if notes:
            out.append(Triple(paper, TKG.hasNote, boolean(True)))
        for iri, body in sorted(notes.items()):
            node = NamedNode(iri)
            out += [Triple(node, RDF.type, TKG.Note), Triple(node, TKG.noteOf, paper),
                    Triple(node, RDF.value, text(body, None))]
            moment = parse_time(remote.note_modified.get(iri))
            if moment:
                out.append(Triple(node, DCTERMS.modified, datetime_literal(moment)))
        item = item_node(self.library, entry.key)
        out += [Triple(paper, TKG.zoteroItem, item), Triple(item, RDF.type, TKG.ZoteroItem),
                Triple(item, TKG.library, text(self.libname, None)), Triple(item, TKG.zoteroKey, text(entry.key, None)),
                Triple(item, TKG.itemVersion, integer(remote.version))]
        if remote.item_type:
            out.append(Triple(item, TKG.itemType, text(remote.item_type, None)))
        extra = "\n".join(remote.extra_rest).strip()
        if extra:
            out.append(Triple(item, SKOS.note, text(extra, None)))
        moment = parse_time(remote.modified)
        if moment:
            out.append(Triple(item, DCTERMS.modified, datetime_literal(moment)))
        for _predicate, values in sorted(remote.relations.items()):
            for value in values:
                if re.match(r"^https?://[^\s<>\"{}|\\^`]+$", value):
                    out.append(Triple(item, DCTERMS.relation, NamedNode(value)))
        for creator in remote.creators:
            name = creator.get("name") or " ".join(
                p for p in (creator.get("firstName", ""), creator.get("lastName", "")) if p).strip()
            if not name:
                continue
            single = bool(creator.get("name"))
            agent = org_iri(name) if single else person_iri(name)
            out += [Triple(agent, RDF.type, FOAF.Group if single else FOAF.Person), Triple(agent, RDF.type, FOAF.Agent),
                    Triple(agent, FOAF.name, text(name, None)), Triple(paper, DCTERMS.creator, agent)]
        parsed = _date(remote.date)
        if parsed:
            out.append(Triple(paper, DCTERMS.issued, date_literal(parsed)))
        if remote.doi:
            out.append(Triple(paper, BIBO.doi, text(remote.doi, None)))
        if remote.arxiv and paper == _arxiv_iri(remote.arxiv):
            out.append(Triple(paper, TKG.arxivId, text(remote.arxiv, None)))
        if re.match(r"^https?://[^\s<>\"{}|\\^`]+$", remote.url or ""):
            out.append(Triple(paper, FOAF.page, NamedNode(remote.url)))
        return out

    def _state_triples(self, tx: Transaction, entry: Entry) -> list[Triple]:
        assert entry.merged is not None and entry.remote is not None and entry.key is not None
        zotero_now = self._zotero_record(entry)
        assert zotero_now is not None
        base = agreed_base(entry.state.base if entry.state else None, entry.merged.result, zotero_now)
        authored = entry.view.authored if entry.view is not None else {"title": None, "categories": []}
        node = _state_node(self.library, "item", entry.key)
        if entry.state is not None:
            old = _state_node(self.library, "item", entry.state.key)
            tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO_SYNC} {{ {old} ?p ?o }} }}", touches=[ZOTERO_SYNC])
        triples = [
            Triple(node, RDF.type, TKG.SyncState), Triple(node, TKG.library, text(self.libname, None)),
            Triple(node, TKG.zoteroKey, text(entry.key, None)), Triple(node, TKG.paper, entry.paper),
            Triple(node, TKG.itemVersion, integer(entry.remote.version)),
            Triple(node, TKG.baseRecord, _json_literal(base.to_json())),
            Triple(node, TKG.remoteRecord, Literal(entry.remote.to_json(), datatype=RDF_JSON)),
            Triple(node, TKG.authoredRecord, _json_literal(authored)),
            Triple(node, PROV.generatedAtTime, datetime_literal(self.now)),
        ]
        triples += [Triple(node, TKG.noteKey, text(k, None)) for k in sorted(entry.remote.note_keys.values())]
        return triples

    def _conflict_node(self, record: ConflictRecord) -> NamedNode:
        """Conflicts get names from their content, so recording one twice is harmless."""
        digest = hashlib.sha1(json.dumps([self.libname, record.paper, record.field, record.base, record.graph,
                                          record.zotero, record.winner], sort_keys=True,
                                         ensure_ascii=False).encode()).hexdigest()[:24]
        return ID["sync-conflict/" + digest]

    def _write_conflicts(self, tx: Transaction, records: list[ConflictRecord]) -> None:
        triples: list[Triple] = []
        for record in records:
            node = self._conflict_node(record)
            if node.value in self.recorded or self.store.ask("ASK { GRAPH ?g { ?c a tkg:SyncConflict } }", {"c": node}):
                continue
            self.recorded.add(node.value)
            triples += [
                Triple(node, RDF.type, TKG.SyncConflict), Triple(node, TKG.library, text(self.libname, None)),
                Triple(node, TKG.paper, NamedNode(record.paper)), Triple(node, TKG.field, text(record.field, None)),
                Triple(node, TKG.graphValue, _json_literal(record.graph)),
                Triple(node, TKG.zoteroValue, _json_literal(record.zotero)),
                Triple(node, TKG.baseValue, _json_literal(record.base)),
                Triple(node, TKG.winner, text(record.winner, None)), Triple(node, TKG.rule, text(record.rule, None)),
                Triple(node, TKG.losingValue, _json_literal(record.losing_value)),
                Triple(node, PROV.atTime, datetime_literal(self.now)),
                Triple(node, DCTERMS.title, text(record.title, None)),
            ]
            if record.key:
                triples.append(Triple(node, TKG.zoteroKey, text(record.key, None)))
        tx.insert(ZOTERO_SYNC, triples)

    def _journal(self) -> None:
        """Before Zotero loses a value to the graph (a conflict the graph won, an item
        restored after a deletion), record the conflict with the losing value: if the
        sync then fails, what Zotero held is still in the conflict log. Only the
        ``zotero-sync`` graph is written."""
        records = [r for r in self._conflict_records() if r.winner == "graph" and r.rule != "pending"
                   and self._conflict_node(r).value not in self.recorded]
        if not records:
            return
        with self.store.transaction(Activity(f"kg sync zotero {self.libname}: conflicts decided",
                                             used=[self.api.source_url])) as tx:
            self._write_conflicts(tx, records)

    def _write_collections(self, tx: Transaction) -> None:
        current = {k: (n, self.collection_versions.get(k, 0)) for k, n in self.collection_names.items()}
        if current == self.loaded_collections:
            return
        for key in sorted(self.loaded_collections):
            node = _state_node(self.library, "collection", key)
            tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO_SYNC} {{ {node} ?p ?o }} }}", touches=[ZOTERO_SYNC])
        triples: list[Triple] = []
        for key, (name, version) in sorted(current.items()):
            node = _state_node(self.library, "collection", key)
            label = self.to_graph_label.get(name, name)
            triples += [Triple(node, RDF.type, TKG.SyncState), Triple(node, TKG.library, text(self.libname, None)),
                        Triple(node, TKG.zoteroKey, text(key, None)),
                        Triple(node, TKG.collectionName, text(name, None)),
                        Triple(node, TKG.itemVersion, integer(version)),
                        Triple(node, TKG.category, _category_iri(label))]
        tx.insert(ZOTERO_SYNC, triples)

    def _write_library(self, tx: Transaction, activity: Activity) -> None:
        node = _library_node(self.library)
        tx.update(f"DELETE WHERE {{ GRAPH {ZOTERO_SYNC} {{ {node} ?p ?o }} }}", touches=[ZOTERO_SYNC])
        touched = {g.value for g in tx.touched}
        snapshot = {g.value: (activity.iri.value if g.value in touched else self.graph_activity.get(g.value, ""))
                    for g in WATCHED}
        tx.insert(ZOTERO_SYNC, [
            Triple(node, RDF.type, TKG.SyncState), Triple(node, TKG.library, text(self.libname, None)),
            Triple(node, TKG.libraryVersion, integer(self.known_version)),
            Triple(node, TKG.graphSnapshot, _json_literal(snapshot)),
            Triple(node, PROV.generatedAtTime, datetime_literal(self.now)),
        ])


# -- item types ----------------------------------------------------------------------------

_JOURNAL = re.compile(r"(?i)\b(journal|transactions|jmlr|vldb|letters|review|magazine)\b")


def _item_type(info: Mapping[str, Any]) -> str:
    types = info.get("types", set())
    venue = str(info.get("venue") or "")
    if BIBO.Report in types:
        return "report"
    if FABIO.BlogPost in types:
        return "blogPost"
    if BIBO.Webpage in types:
        return "webpage"
    if venue and not re.search(r"(?i)arxiv|preprint", venue):
        return "journalArticle" if _JOURNAL.search(venue) else "conferencePaper"
    if info.get("arxiv") or FABIO.Preprint in types or re.search(r"(?i)arxiv|preprint", venue):
        return "preprint"
    return "journalArticle" if BIBO.AcademicArticle in types else "document"


def _classes(item_type: str) -> list[NamedNode]:
    return {"preprint": [BIBO.AcademicArticle, FABIO.Preprint], "journalArticle": [BIBO.AcademicArticle],
            "conferencePaper": [BIBO.AcademicArticle], "report": [BIBO.Report], "blogPost": [FABIO.BlogPost],
            "webpage": [BIBO.Webpage], "computerProgram": [BIBO.Webpage]}.get(item_type, [])


def _creator(name: str, group: bool, item_type: str) -> dict[str, str]:
    role = "programmer" if item_type == "computerProgram" else "author"
    if group or " " not in name.strip():
        return {"creatorType": role, "name": name}
    first, _, last = name.strip().rpartition(" ")
    return {"creatorType": role, "firstName": first, "lastName": last}


def _date(value: str) -> str | None:
    m = re.match(r"^\s*(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?\s*$", value or "")
    if not m:
        m2 = re.search(r"\b(\d{4})\b", value or "")
        return m2.group(1) if m2 else None
    return "-".join(p for p in m.groups() if p)


def _arxiv_iri(value: str) -> NamedNode | None:
    try:
        return parse_arxiv_id(value).iri
    except ValueError:
        return None


# -- reading the conflicts back ---------------------------------------------------------------


def conflict_rows(store: GraphStore, library: LibrarySpec | None = None) -> list[dict[str, Any]]:
    """Recorded conflicts (newest first): field, both values, winner, rule and the losing
    value, so that a user can put it back."""
    rows = store.select(
        f"""SELECT ?c ?lib ?paper ?title ?key ?field ?graph ?zotero ?base ?winner ?rule ?losing ?at WHERE {{
              GRAPH {ZOTERO_SYNC} {{ ?c a tkg:SyncConflict ; tkg:library ?lib ; tkg:paper ?paper ; tkg:field ?field ;
                tkg:graphValue ?graph ; tkg:zoteroValue ?zotero ; tkg:baseValue ?base ; tkg:winner ?winner ;
                tkg:rule ?rule ; tkg:losingValue ?losing ; prov:atTime ?at
                OPTIONAL {{ ?c dcterms:title ?title }} OPTIONAL {{ ?c tkg:zoteroKey ?key }} }} }}
            ORDER BY DESC(?at) ?title ?field""")
    out = []
    for row in rows:
        lib = str(_plain(row["lib"]))
        if library is not None and lib != str(library):
            continue
        out.append({
            "id": row["c"].value.rsplit("/", 1)[1], "library": lib, "paper": row["paper"].value,  # type: ignore[union-attr]
            "title": _plain(row["title"]) or "", "key": _plain(row["key"]) or "", "field": _plain(row["field"]),
            "graph": json.loads(str(_plain(row["graph"]))), "zotero": json.loads(str(_plain(row["zotero"]))),
            "base": json.loads(str(_plain(row["base"]))), "winner": _plain(row["winner"]), "rule": _plain(row["rule"]),
            "losing_value": json.loads(str(_plain(row["losing"]))), "at": str(_plain(row["at"])),
        })
    return out
