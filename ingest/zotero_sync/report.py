"""What a sync is asked (:class:`SyncOptions`) and what it says it did (:class:`SyncReport`,
each :class:`Change` and :class:`ConflictRecord`), .
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ingest.zotero_merge import Conflict
from kg.errors import SyncError

__all__ = ["Change", "ConflictRecord", "STATUS_FORMATS", "SyncOptions", "SyncReport"]


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
class ConflictRecord(Conflict):
    """A conflict (:class:`ingest.zotero_merge.Conflict`) and the paper it is about, as reported."""

    paper: str
    title: str
    key: str

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
