"""``kg undo``: the user's graphs put back as the newest snapshot has them (:mod:`kg.store.snapshots`
takes the snapshots; this module uses them).

The state it replaces is itself kept as a snapshot under ``snapshots/undone/`` (``kg
restore FILE`` puts it back), and an undo that would discard later changes to the user's
graphs is refused unless the user says yes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from kg.errors import KGError, NotFoundError
from kg.graphs import PROVENANCE, USER_GRAPHS, graph_name
from kg.store.base import Activity, GraphStore
from kg.store.snapshots import Snapshot, Snapshots, snapshots_for, user_hashes

__all__ = ["UndoReport", "describe_graphs", "later_changes", "undo"]


@dataclass
class UndoReport:
    snapshot: Snapshot
    restored: dict[str, int]
    discarded: list[str]
    kept_as: Path | None
    changed: bool


def later_changes(store: GraphStore, snap: Snapshot) -> list[str]:
    """What changed a user graph after the command ``snap`` was taken for (by content:
    an undo that put a graph back as it was is no change)."""
    now = user_hashes(store)
    changed = [g for g, digest in now.items() if digest != snap.after.get(g, digest)]
    if not changed:
        return []
    rows = store.select(
        f"""SELECT ?g ?label ?ended WHERE {{ GRAPH {PROVENANCE} {{ ?g prov:wasGeneratedBy ?act .
              ?act rdfs:label ?label OPTIONAL {{ ?act prov:endedAtTime ?ended }} }} }}""",
        {"g": [ox.NamedNode(g) for g in changed]},
    ).records()
    said = {str(r["g"]): f"{graph_name(ox.NamedNode(r['g']))} by `{r['label']}` at {str(r['ended'] or '')[:19]}"
            for r in rows}
    return sorted(said.get(g, f"{graph_name(ox.NamedNode(g))} (emptied)") for g in changed)


def undo(store: GraphStore, *, yes: bool = False) -> UndoReport:
    """Put the user's graphs back as the newest snapshot has them."""
    snaps = snapshots_for(store)
    snaps.resolve_pending(store)
    kept = snaps.kept()
    if not kept:
        raise NotFoundError("there is nothing to undo: no command has replaced your graphs yet",
                            hint="Snapshots are taken before a command replaces or drops your reading list, "
                            f"reading state or sync state; they are kept in {snaps.folder}.")
    snap = kept[0]
    discarded = later_changes(store, snap)
    if discarded and not yes:
        raise KGError(
            f"your graphs changed after {snap.describe()}: " + "; ".join(discarded),
            hint="kg undo would discard those changes too. Pass --yes to undo anyway (the state it replaces "
            "is kept under snapshots/undone/, and kg restore FILE puts it back).",
        )
    content = snap.content()
    activity = Activity("kg undo", used=[str(snap.path)])
    snap.state, snap.undoer = "undoing", activity.iri.value
    snap.save()
    try:
        with store.transaction(activity) as tx:
            tx.snapshot_to = Snapshots(snaps.folder / "undone")
            for graph in USER_GRAPHS:
                triples = content.get(graph, [])
                if triples:
                    tx.replace_graph(graph, triples)
                else:
                    tx.drop_graph(graph)
    except BaseException:
        snap.state, snap.undoer = "kept", None
        snap.save()
        raise
    snap.remove()
    taken = tx.snapshot_taken
    return UndoReport(snapshot=snap, restored={graph_name(g): len(t) for g, t in content.items()},
                      discarded=discarded, kept_as=taken.path if taken else None, changed=bool(tx.touched))


def describe_graphs(counts: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{name} ({n} triples)" for name, n in counts) or "no graph (they were empty)"
