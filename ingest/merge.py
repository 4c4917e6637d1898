"""Merging one run's results into a source's named graph, and the run's summary.

A source graph (``arxiv``, ``github``) is rewritten as a whole in one transaction, so
a run is atomic. So that an incremental run does not drop what earlier runs found, the
new graph is the old one with each record this run fetched swapped in:

- a :class:`Bundle` is everything one record says: the triples about its node and
  about helper nodes it owns (an author list), which replace the old ones;
- predicates listed in ``keep`` accumulate instead (a repository's snapshots and
  former names), and ``extra`` triples are simply added (a new snapshot);
- shared nodes (people) are unioned, and dropped once nothing refers to them.

Each record is counted as added, updated or unchanged by comparing its old and new
triples; :class:`IngestReport` carries those counts with the missing and failed ones.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import NamedNode, Triple

__all__ = ["Bundle", "IngestReport", "merge"]


@dataclass
class Bundle:
    """What one fetched record says. ``owned`` are the subjects whose triples it replaces
    (its node first); ``keep`` the predicates on ``node`` that accumulate over runs."""

    key: str
    node: NamedNode
    triples: list[Triple]
    owned: set[NamedNode] = field(default_factory=set)
    keep: frozenset[NamedNode] = frozenset()
    extra: list[Triple] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.owned.add(self.node)


def _compared(triples: list[Triple], bundle: Bundle) -> set[Triple]:
    """The triples (all about the bundle's owned nodes) that decide whether it changed."""
    if not bundle.keep:
        return set(triples)
    return {t for t in triples if t.predicate not in bundle.keep or t.subject != bundle.node}


def merge(
    existing: Iterable[Triple],
    bundles: Iterable[Bundle],
    *,
    collectable: Callable[[NamedNode], bool] = lambda node: False,
) -> tuple[list[Triple], dict[str, str]]:
    """The merged graph, and each bundle's outcome: ``added``, ``updated`` or ``unchanged``."""
    by_subject: dict[Any, list[Triple]] = defaultdict(list)
    for t in existing:
        by_subject[t.subject].append(t)
    outcomes: dict[str, str] = {}
    replaced: dict[Any, list[Triple]] = {}
    added: list[Triple] = []
    for bundle in bundles:
        old = [t for s in bundle.owned for t in by_subject.get(s, [])]
        fresh = [t for t in bundle.triples if t.subject in bundle.owned]
        kept = [t for t in by_subject.get(bundle.node, []) if t.predicate in bundle.keep]
        if not old and bundle.node not in replaced:
            outcomes[bundle.key] = "added"
        elif _compared(old, bundle) == _compared(fresh, bundle):
            outcomes[bundle.key] = "unchanged"
        else:
            outcomes[bundle.key] = "updated"
        for subject in bundle.owned:
            replaced.setdefault(subject, [])
        replaced[bundle.node].extend(kept)
        for t in fresh:
            replaced[t.subject].append(t)
        added.extend(t for t in bundle.triples if t.subject not in bundle.owned)
        added.extend(bundle.extra)
    out: dict[Triple, None] = {}  # ordered set
    for subject, triples in by_subject.items():
        if subject not in replaced:
            out.update(dict.fromkeys(triples))
    for triples in replaced.values():
        out.update(dict.fromkeys(triples))
    out.update(dict.fromkeys(added))
    referenced = {t.object for t in out}
    orphans = {t.subject for t in out if t.subject not in referenced}
    dropped = {s for s in orphans if isinstance(s, NamedNode) and collectable(s)}
    merged = [t for t in out if t.subject not in dropped] if dropped else list(out)
    return merged, outcomes


@dataclass
class IngestReport:
    """The summary a run prints: what it added, updated, left unchanged, could not find
    (missing) or could not fetch (failed), and the requests it needed."""

    source: str
    mode: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    not_in_cache: list[str] = field(default_factory=list)
    http: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    graph_written: bool = False
    activity: str = ""
    store: str = ""
    #: The IRIs of the papers the run wrote anew or changed (for derived data such as the
    #: search index, which makes only their documents again).
    nodes: list[str] = field(default_factory=list)

    def record(self, outcomes: dict[str, str]) -> None:
        for key, outcome in outcomes.items():
            getattr(self, outcome).append(key)

    def counts(self) -> dict[str, int]:
        return {"added": len(self.added), "updated": len(self.updated), "unchanged": len(self.unchanged),
                "missing": len(self.missing) + len(self.not_in_cache), "failed": len(self.failed)}

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "mode": self.mode, **self.counts(),
            "added_items": self.added, "updated_items": self.updated, "missing_items": self.missing,
            "not_in_cache": self.not_in_cache, "failed_items": [{"item": k, "error": e} for k, e in self.failed],
            "http": self.http, "notes": self.notes, "graph_written": self.graph_written,
            "activity": self.activity, "store": self.store,
        }
