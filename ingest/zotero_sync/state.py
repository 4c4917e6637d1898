"""What the sync keeps about each side of a paper (:class:`Remote`, :class:`State`,
:class:`GraphView`, :class:`Entry`), the IRIs of its records in the ``zotero-sync``
graph, and :class:`SyncBase`: one sync's working state and how it loads what the last
sync agreed on (the library's watermark, the item states).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import Literal, NamedNode

from ingest.zotero import (
    BATCH,
    LibrarySpec,
    ZoteroAPI,
    ZoteroItem,
    parse_time,
)
from ingest.zotero_merge import Conflict, Merged, Record
from ingest.zotero_sync.report import SyncOptions, SyncReport
from kg.graphs import CATALOG, PROVENANCE, READING, READING_LIST, ZOTERO, ZOTERO_SYNC
from kg.iris import slugify
from kg.notes import PaperNotes
from kg.results import python_value
from kg.store.base import GraphStore
from kg.vocab import (
    ID,
    RDF,
    text,
)

__all__ = [
    "RDF_JSON",
    "WATCHED",
    "Entry",
    "GraphView",
    "Remote",
    "State",
    "SyncBase",
    "category_iri",
    "chunked",
    "item_node",
    "json_literal",
    "library_node",
    "note_iri",
    "plain",
    "state_node",
    "values_block",
]


RDF_JSON = RDF.JSON
#: Graphs whose changes the sync must look at: the reading state, the reading list, the
#: catalog and the graph's copy of the Zotero data.
WATCHED = (READING, READING_LIST, CATALOG, ZOTERO)


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


def values_block(var: str, terms: Iterable[NamedNode | Literal]) -> str:
    """A VALUES block of RDF terms serialised by pyoxigraph (never pasted text)."""
    return f"VALUES ?{var} {{ {' '.join(str(t) for t in terms)} }}"


def chunked(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i: i + size]


def json_literal(value: Any) -> Literal:
    return Literal(json.dumps(value, sort_keys=True, ensure_ascii=False), datatype=RDF_JSON)


def plain(term: Any) -> Any:
    return python_value(term) if term is not None else None


def category_iri(label: str) -> NamedNode:
    return ID["reading-category/" + slugify(label)]


def note_iri(library: LibrarySpec, key: str) -> NamedNode:
    """The node of a Zotero child note that first appeared in Zotero."""
    return ID[f"note/zotero/{library.slug}/{key.lower()}"]


def item_node(library: LibrarySpec, key: str) -> NamedNode:
    return ID[f"zotero/{library.slug}/item/{key.lower()}"]


def state_node(library: LibrarySpec, what: str, key: str) -> NamedNode:
    return ID[f"sync/zotero/{library.slug}/{what}/{key.lower()}"]


def library_node(library: LibrarySpec) -> NamedNode:
    return ID[f"sync/zotero/{library.slug}"]



class SyncBase:
    """One sync's working state (see :func:`ingest.zotero_sync.sync`); each step of the
    sync (reading, merging, writing, pushing) is a subclass that adds its methods."""

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

    # -- state -----------------------------------------------------------------------

    def _load_library(self) -> None:
        rows = self.store.select(
            f"""SELECT ?version ?snapshot WHERE {{ GRAPH {ZOTERO_SYNC} {{
                  {library_node(self.library)} tkg:libraryVersion ?version .
                  OPTIONAL {{ {library_node(self.library)} tkg:graphSnapshot ?snapshot }} }} }}""")
        if rows.rows:
            self.watermark = int(plain(rows.rows[0]["version"]))
            raw = plain(rows.rows[0]["snapshot"])
            self.snapshot = json.loads(raw) if raw else {}
        coll = self.store.select(
            f"""SELECT ?key ?name ?version WHERE {{ GRAPH {ZOTERO_SYNC} {{
                  ?c tkg:collectionName ?name ; tkg:library ?lib ; tkg:zoteroKey ?key ; tkg:itemVersion ?version }}
                  FILTER(?lib = {text(self.libname, None)}) }}""")
        for row in coll:
            self.collection_names[str(plain(row["key"]))] = str(plain(row["name"]))
            self.collection_versions[str(plain(row["key"]))] = int(plain(row["version"]))
        self.loaded_collections = {k: (n, self.collection_versions[k]) for k, n in self.collection_names.items()}
        prov = self.store.select(
            f"""SELECT ?g ?act ?modified WHERE {{ GRAPH {PROVENANCE} {{
                  ?g prov:wasGeneratedBy ?act . OPTIONAL {{ ?g dcterms:modified ?modified }} }} }}""")
        watched = {g.value for g in WATCHED}
        for row in prov:
            g = row["g"].value  # type: ignore[union-attr]
            if g in watched:
                self.graph_activity[g] = row["act"].value  # type: ignore[union-attr]
                moment = parse_time(str(plain(row["modified"]))) if row["modified"] else None
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
            lookups.append(("", [state_node(self.library, "item", k) for k in keys]))
        if papers:
            lookups.append((f"?state tkg:paper ?paper ; tkg:library {lib} .", list(papers)))
        if note_keys:
            lookups.append(("?state tkg:noteKey ?nk .", [text(k, None) for k in note_keys]))
        out: dict[str, State] = {}
        for pattern, terms in lookups:
            var = "nk" if "?nk" in pattern else "paper" if "?paper" in pattern else "state"
            for chunk in (list(chunked(terms, 400)) if terms else [[]]):
                values = values_block(var, chunk) if chunk else ""
                rows = self.store.select(
                    f"""SELECT ?key ?paper ?version ?base ?remote ?authored WHERE {{ GRAPH {ZOTERO_SYNC} {{
                          {values} {pattern} ?state tkg:zoteroKey ?key ; tkg:paper ?paper ; tkg:itemVersion ?version ;
                            tkg:baseRecord ?base ; tkg:remoteRecord ?remote ; tkg:authoredRecord ?authored }} }}""")
                for row in rows:
                    key = str(plain(row["key"]))
                    if key in out:
                        continue
                    out[key] = State(
                        key=key, paper=row["paper"], version=int(plain(row["version"])),  # type: ignore[arg-type]
                        base=Record.from_json(json.loads(str(plain(row["base"])))),
                        remote=Remote.from_json(str(plain(row["remote"]))),
                        authored=json.loads(str(plain(row["authored"]))))
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
