"""Reading both sides: what changed in Zotero since the last sync (collections, items,
child notes, items new to the graph) and what changed in the graph (the papers whose
reading state, list entry or Zotero data were written since).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from pyoxigraph import NamedNode

from ingest.zotero import (
    Changes,
    ZoteroItem,
    paper_iri_for,
    parse_item,
    parse_time,
)
from ingest.zotero_sync.records import Merging
from ingest.zotero_sync.state import WATCHED, Entry, GraphView, Remote, chunked, note_iri, plain, values_block
from kg.graphs import CATALOG, READING, READING_LIST, ZOTERO
from kg.notes import synced_notes
from kg.reading import KNOWN_STATUSES
from kg.vocab import (
    DCTERMS,
    TKG,
    text,
)

__all__ = ["Reading"]


class Reading(Merging):
    """What changed on each side since the last sync."""

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
        for chunk in chunked(arxiv_ids, 400):
            block = values_block("id", [text(a, None) for a in chunk])
            for row in self.store.select(f"SELECT ?id ?paper WHERE {{ {block} ?paper tkg:arxivId ?id }}"):
                by_arxiv.setdefault(str(plain(row["id"])), row["paper"])  # type: ignore[arg-type]
        if dois:
            wanted = set(dois)
            for row in self.store.select("SELECT ?paper ?doi WHERE { ?paper bibo:doi ?doi }"):
                value = str(plain(row["doi"])).strip().lower()
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
        for chunk in chunked(wanted, 500):
            block = values_block("paper", chunk)
            statuses: dict[str, tuple[NamedNode, str | None]] = {}
            for row in self.store.select(
                    f"""SELECT ?paper ?s (MAX(?t) AS ?at) WHERE {{ GRAPH {READING} {{ {block}
                          ?paper tkg:readingStatus ?s OPTIONAL {{ ?paper tkg:statusChangedAt ?t }} }} }}
                        GROUP BY ?paper ?s"""):
                statuses[row["paper"].value] = (row["s"], str(plain(row["at"])) if row["at"] else None)  # type: ignore[union-attr,assignment]
            custom = {s.value: s for s, _at in statuses.values() if s.value.rsplit("/", 1)[1] not in KNOWN_STATUSES}
            labels: dict[str, str] = {}
            for part in chunked(list(custom.values()), 500):
                labelled = f"SELECT ?s ?l WHERE {{ {values_block('s', part)} ?s skos:prefLabel ?l }}"
                for row in self.store.select(labelled):
                    labels.setdefault(row["s"].value, str(plain(row["l"])))  # type: ignore[union-attr]
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
                per.setdefault(row["g"].value, []).append(str(plain(row["title"])))  # type: ignore[union-attr]
            for value, per in titles.items():
                chosen = per.get(CATALOG.value) or per.get(READING_LIST.value) or []
                views[value].auth_title = min(chosen) if chosen else None
            for row in self.store.select(
                    f"""SELECT ?paper ?label WHERE {{ {block} GRAPH {READING_LIST} {{ ?paper tkg:readingCategory ?c }}
                          ?c skos:prefLabel ?label }}"""):
                view = views[row["paper"].value]  # type: ignore[union-attr]
                view.auth_categories = view.auth_categories | {str(plain(row["label"]))}
            for row in self.store.select(
                    f"""SELECT ?paper ?p ?o ?label WHERE {{ {block} GRAPH {ZOTERO} {{ ?paper ?p ?o }}
                          FILTER(?p IN (dcterms:title, tkg:tag, tkg:readingCategory, tkg:zoteroItem))
                          OPTIONAL {{ ?o skos:prefLabel ?label }} }}"""):
                view = views[row["paper"].value]  # type: ignore[union-attr]
                predicate = row["p"]
                if predicate == TKG.zoteroItem:
                    view.linked = True
                elif predicate == DCTERMS.title:
                    view.z_title = min(filter(None, [view.z_title, str(plain(row["o"]))]))
                elif predicate == TKG.tag:
                    view.z_tags = view.z_tags | {str(plain(row["o"]))}
                elif predicate == TKG.readingCategory and row["label"] is not None:
                    view.z_categories = view.z_categories | {str(plain(row["label"]))}
            # The graph's notes: Zotero's copies, with the reader's texts and deletions over them (kg.notes).
            for value, notes in synced_notes(self.store, chunk).items():
                view = views[value]
                view.notes, view.z_notes, view.z_note_modified = notes, notes.shown, dict(notes.modified)
        for view in views.values():
            self._entry(view.paper).view = view
