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

One module per step, each a class that adds its methods to the one before:
:mod:`~ingest.zotero_sync.state` (what the sync keeps, :class:`SyncBase`),
:mod:`~ingest.zotero_sync.records` (each side's record, merged, and the plan),
:mod:`~ingest.zotero_sync.read` (what changed on each side),
:mod:`~ingest.zotero_sync.write` (the graph's commit and the conflict journal) and
:mod:`~ingest.zotero_sync.push` (writing to Zotero); :mod:`~ingest.zotero_sync.report`
holds the options and the report, :mod:`~ingest.zotero_sync.items` the item types.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from ingest.zotero import ZoteroAPI
from ingest.zotero_sync.push import Pushing
from ingest.zotero_sync.report import Change, ConflictRecord, SyncOptions, SyncReport
from ingest.zotero_sync.write import conflict_rows
from kg.store.base import GraphStore

__all__ = ["Change", "ConflictRecord", "SyncOptions", "SyncReport", "conflict_rows", "ingest", "sync"]


def sync(store: GraphStore, api: ZoteroAPI, options: SyncOptions | None = None, *,
         progress: Callable[[str, int, int], None] | None = None) -> SyncReport:
    """Sync ``api.library`` with the graph in ``store``; see the module docstring."""
    return _Sync(store, api, options or SyncOptions(), progress).run()


class _Sync(Pushing):
    """The steps of a sync in their order: read, merge, plan, push, commit."""

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


def ingest(store: GraphStore, api: ZoteroAPI, *, options: SyncOptions | None = None,
           progress: Callable[[str, int, int], None] | None = None) -> SyncReport:
    """``kg ingest zotero``: read the library into the graph (items, creators, tags,
    collections, child notes, reading statuses), incrementally from the last library
    version seen. Nothing is written to Zotero."""
    opts = replace(options or SyncOptions(), direction="pull")
    return sync(store, api, opts, progress=progress)
