"""Large transactions into the embedded store: at the bulk loader's speed, in bounded memory.

A :class:`~kg.store.base.Transaction` commits as one SPARQL Update request, which Oxigraph
parses whole and applies in one RocksDB transaction held in memory: a 50,000-entry reading
list, some 900,000 triples, took minutes and gigabytes that way. When a transaction starts
with many triples written as data (:class:`~kg.store.base.Data` steps), the embedded store
(:meth:`~kg.store.embedded.OxigraphStore.commit_transaction`) writes it so instead:

1. **Plan** (:func:`plan`). The data steps before the first raw update go in bulk; the rest
   of the transaction (raw updates, the provenance records) stays one update, run after
   them, so every step still sees the ones before it. For each graph, the net effect of its
   steps in order is the triples to add and those to remove; for a graph the transaction
   replaces, against what it holds now (dumped by Oxigraph), so that a graph replaced by
   nearly the same content costs what changed.
2. **Journal** (:func:`prepare`). Those triples (N-Triples files, in the store's own form),
   the rest as one SPARQL Update text, and last the journal, written atomically, go to a
   work folder in the store's directory, all made durable. The store is only read.
3. **Apply** (:func:`apply`). For each graph the removals run in bounded ``DELETE DATA``
   batches while the bulk loader adds the new triples beside them (the two sets are
   disjoint); then the rest runs as one update, and the folder goes.

Nothing touches the store before the journal: a failure or a kill before it leaves the
store as it was. From the journal on, the transaction completes, now or at the next open
of the store (:func:`resume`, run first by the embedded store's recovery): every step of
the apply is idempotent (adding a triple the graph holds, or removing one it does not, is
no change). Other processes never see a half-applied transaction: they read the view the
store publishes after the last step (:mod:`kg.store.folder`). Within the writing process, a
thread that read the live store while the apply runs could see part of it: ``kg serve``,
whose pages read the live store, writes only small transactions and raw updates (statuses,
notes, follows, SPARQL Update), which never take this path.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kg.pauses import pause_point
from kg.settings import count_setting
from kg.store.base import Data, Operation, operation_text, prefix_block
from kg.store.bulk import Background, remove_lines
from kg.store.copies import canonical_triples, fsync
from kg.store.folder import TRANSACTIONS

__all__ = ["BULK_TRIPLES", "Plan", "apply", "pending", "plan", "prepare", "resume", "threshold", "work_folder"]

#: Triples a transaction's leading data steps write, from which it goes in bulk; below it,
#: one update request is quicker than a journal, and holds little memory. KG_BULK_TRIPLES
#: sets another (the tests set 1, to take this path with a small list).
BULK_TRIPLES = 20_000
#: Where journalled transactions keep their work, inside the store's directory.
WORK_FOLDER = TRANSACTIONS
JOURNAL = "journal.json"
#: Triples turned into lines at a time (bounds the memory of one step's text).
_CHUNK = 50_000


@dataclass
class Plan:
    """How a transaction is written: each bulk graph's data steps, in order, and the rest."""

    bulk: dict[ox.NamedNode, list[Data]] = field(default_factory=dict)
    rest: list[Operation] = field(default_factory=list)


def threshold() -> int:
    return count_setting("KG_BULK_TRIPLES", BULK_TRIPLES)


def plan(operations: Sequence[Operation]) -> Plan | None:
    """The bulk plan of a transaction, or None when it is better (or only correct) written
    as one update: its leading data steps write fewer than :func:`threshold` triples, or
    hold blank nodes (whose labels the bulk loader would not keep)."""
    lead = 0
    while lead < len(operations) and isinstance(operations[lead], Data):
        lead += 1
    steps = [op for op in operations[:lead] if isinstance(op, Data)]
    if not steps or sum(len(op.triples) for op in steps) < threshold():
        return None
    if any(isinstance(t.subject, ox.BlankNode) or isinstance(t.object, ox.BlankNode)
           for op in steps for t in op.triples):
        return None
    result = Plan(rest=list(operations[lead:]))
    for op in steps:
        result.bulk.setdefault(op.graph, []).append(op)
    return result


def work_folder(store_dir: Path) -> Path:
    return store_dir / WORK_FOLDER / uuid.uuid4().hex


def _lines(triples: Sequence[ox.Triple]) -> Iterator[bytes]:
    """Each triple as one N-Triples line in the store's own form (with its newline)."""
    for start in range(0, len(triples), _CHUNK):
        yield from canonical_triples(triples[start:start + _CHUNK]).splitlines(keepends=True)


def prepare(store: ox.Store, the_plan: Plan, folder: Path, *, activity: str) -> dict[str, int]:
    """Write the plan's journal in ``folder`` (steps 1 and 2 above); ``activity`` names the
    command, for a recovery to say what it completes. Returns the triples added and removed."""
    folder.mkdir(parents=True, exist_ok=True)
    graphs = []
    totals = {"added": 0, "removed": 0}
    for index, (graph, ops) in enumerate(the_plan.bulk.items()):
        added, removed = folder / f"added-{index}.nt", folder / f"removed-{index}.nt"
        n_added, n_removed = _diff(store, graph, ops, added, removed, folder / f"old-{index}.nt")
        graphs.append({"graph": graph.value, "added": added.name, "removed": removed.name, "removed_count": n_removed})
        totals["added"] += n_added
        totals["removed"] += n_removed
    text = operation_text(the_plan.rest)
    written = " ".join(op for op in text if not op.startswith(("INSERT DATA", "DELETE DATA")))
    (folder / "update.rq").write_text(prefix_block(written) + " ;\n".join(text) if text else "", encoding="utf-8")
    for path in folder.iterdir():
        fsync(path)
    pause_point("store.bulk-diffed")
    tmp = folder / (JOURNAL + ".tmp")
    tmp.write_text(json.dumps({"activity": activity, "graphs": graphs}), encoding="utf-8")
    fsync(tmp)
    tmp.replace(folder / JOURNAL)
    fsync(folder)
    return totals


def _diff(store: ox.Store, graph: ox.NamedNode, ops: Sequence[Data], added: Path, removed: Path,
          old: Path) -> tuple[int, int]:
    """Write the triples that ``ops`` (in order) add to ``graph`` and those they remove;
    return how many of each."""
    replaced = False
    present: dict[bytes, bool] = {}  # line → whether the graph holds it after the steps
    for op in ops:
        if op.kind == "replace":
            replaced, present = True, {}
        for line in _lines(op.triples):
            present[line] = op.kind != "delete"
    n_added = n_removed = 0
    with removed.open("wb") as out:
        if replaced:  # what the graph holds and the new content lacks goes; what both have stays
            store.dump(str(old), ox.RdfFormat.N_TRIPLES, from_graph=graph)
            with old.open("rb") as held:
                for line in held:
                    if present.pop(line, False) is False:
                        out.write(line)
                        n_removed += 1
            old.unlink()
        else:
            for line, value in present.items():
                if not value:
                    out.write(line)
                    n_removed += 1
    with added.open("wb") as out:
        for line, value in present.items():
            if value:
                out.write(line)
                n_added += 1
    return n_added, n_removed


def apply(store: ox.Store, folder: Path, update: Callable[[str], None]) -> None:
    """Apply the journalled transaction in ``folder`` (again, if it was cut short: every
    step is idempotent), then remove the folder. ``update`` runs the rest of it."""
    record = json.loads((folder / JOURNAL).read_text(encoding="utf-8"))
    for entry in record["graphs"]:
        graph = ox.NamedNode(entry["graph"])
        added = folder / entry["added"]
        loading = Background(lambda added=added, graph=graph: store.bulk_load(  # type: ignore[misc]
            path=str(added), format=ox.RdfFormat.N_TRIPLES, to_graph=graph), "kg-load-added") \
            if added.stat().st_size else None
        try:
            remove_lines(store, graph, folder / entry["removed"], None, entry["removed_count"])
        finally:
            if loading is not None:
                loading.result()
        pause_point("store.bulk-graph-applied")
    store.flush()
    text = (folder / "update.rq").read_text(encoding="utf-8")
    if text:
        update(text)
    shutil.rmtree(folder, ignore_errors=True)


def pending(store_dir: Path) -> dict[Path, dict[str, Any] | None]:
    """The work folders left in ``store_dir``, each with its journal (``activity``: the
    command; ``graphs``: what it writes in bulk), or None for a folder that never got one
    (its store was never touched)."""
    root = store_dir / WORK_FOLDER
    out: dict[Path, dict[str, Any] | None] = {}
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            try:
                out[folder] = dict(json.loads((folder / JOURNAL).read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError):
                out[folder] = None
    return out


def resume(store: ox.Store, found: dict[Path, dict[str, Any] | None], update: Callable[[str], None]) -> None:
    """Finish the transactions of ``found`` (:func:`pending`) a killed process journalled,
    and drop the work folders of those it had not."""
    for folder, record in found.items():
        if record is None:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            apply(store, folder, update)
