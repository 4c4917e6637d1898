"""Each side's record of a paper, merged three-way (:mod:`ingest.zotero_merge`), and the
plan of what the sync will change where.
"""

from __future__ import annotations

from ingest.zotero import (
    parse_time,
)
from ingest.zotero_merge import Record, Stamps, merge
from ingest.zotero_sync.report import Change, ConflictRecord
from ingest.zotero_sync.state import Entry, Remote, SyncBase
from kg.errors import StatusError
from kg.graphs import CATALOG, READING_LIST, ZOTERO
from kg.reading import check_custom_status, known_status

__all__ = ["Merging"]


class Merging(SyncBase):
    """The graph's and Zotero's records of each paper, merged, and the plan."""

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

    def _checked_status(self, entry: Entry, status: str | None, base: Record | None) -> str | None:
        """A status from Zotero as the graph may keep it. A custom one must pass the check
        every status passes (:func:`kg.reading.check_custom_status`); one that does not is
        reported as a failed item, and the sync goes on as if Zotero had not changed it."""
        if status is None or known_status(status) is not None:
            return status
        try:
            return check_custom_status(status)
        except StatusError as err:
            shown = status if len(status) <= 40 else status[:39] + "…"
            message = (f"its reading status in Zotero, {shown!r}, was not taken: {err.message}. "
                       f"{err.hint} Change it in Zotero (the Read_Status line of Extra, or the status/ tag) "
                       "and sync again.")
            if (entry.title, message) not in self.report.failed:
                self.report.failed.append((entry.title, message))
            return base.status if base is not None else None

    def _zotero_record(self, entry: Entry) -> Record | None:
        remote = entry.remote
        if remote is None:
            return None
        base = entry.state.base if entry.state is not None else None
        labels = {self._label(k) for k in remote.collections}
        status = self._checked_status(entry, self._zotero_status(remote, base), base)
        return Record.make(present=remote.present, title=remote.title or None,
                           status=status, tags=remote.tags,
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
                out.append(ConflictRecord(c.field, c.base, c.graph, c.zotero, c.winner, c.rule,
                                          paper=entry.paper.value, title=entry.title, key=entry.key or ""))
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

    def _collection_names_needed(self) -> set[str]:
        names: set[str] = set()
        for entry in self.entries.values():
            if entry.merged is not None and entry.merged.result.present:
                for label in entry.merged.result.categories:
                    names.add(self.to_zotero_name.get(label, label))
        return names
