"""Derived data kept current by the write that changes the graph: one mechanism.

Derived data (the DuckDB analytics tables and their stored answers, the search index) can
always be made again from the graph, but making it again whole costs seconds to minutes at
arXiv scale. So each write says what it changed (:class:`Changes`: the graphs it wrote, the
papers whose reading state changed, the lineage decisions it made, and the papers and
techniques whose own facts it changed) and each *keeper* of derived data brings its view
up to date from that, patching where it can:

- :class:`Keeper` is what a consumer registers (:func:`register`; the CLI registers the
  analytics tables' keeper and the search index's). ``before(store)`` looks at the view
  before the write: it gives a token when there is a view to keep (None: stale already,
  or none, nothing to keep), and ``after(store, changes, token)`` brings it up to date
  after the write, or returns a line that says why it could not and what to run.
- :func:`watch` starts watching a store (each keeper's ``before``), every committed
  transaction on that store adds what it changed (:func:`record`, called by
  :class:`kg.store.base.Transaction`; a command adds what only it knows, such as the
  documents it changed), and :meth:`Watch.finish` hands the changes to the keepers (each
  keeper's ``after``, side by side), once per command. The CLI watches the writer it opens
  and finishes when the command ends.
- :class:`Background` does the same under ``kg serve``: each write's changes are handed to
  the keepers in a thread of the server's, while the write's reply goes out.

The core knows nothing of the keepers: it records and hands over. A keeper never fails
the write; what it cannot do, it says.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["DELTA_LIMIT", "Background", "Changes", "Delta", "Keeper", "Watch", "keepers", "record", "register",
           "watch", "written"]


#: The most triples one graph's net change (:attr:`Changes.deltas`) holds; past it, the
#: change is not kept (the graph is read again whole).
DELTA_LIMIT = 200_000

#: A triple inserted (True) or deleted (False), in the order of the writes: the last wins.
Delta = dict[Any, bool]


@dataclass
class Changes:
    """What writes changed: graph IRIs, papers (IRIs) whose reading state changed, lineage
    decisions as (child, parent) technique IRIs, and the papers and techniques (IRIs) whose
    own facts changed (``documents``) with the graphs whose every change they name
    (``described``; None: not known, every graph that changed may hold others).

    ``deltas`` holds a changed graph's net change (each triple inserted or deleted) where
    every write to it said exactly what it inserted and deleted (a transaction's inserts and
    deletes, at most :data:`DELTA_LIMIT` triples); a graph replaced, dropped or changed by
    a raw update has none, and a write whose graphs are not known (``graphs_known`` False:
    an update through the SPARQL endpoint) leaves none to any graph."""

    graphs: set[str] = field(default_factory=set)
    papers: set[str] = field(default_factory=set)
    decisions: set[tuple[str, str]] = field(default_factory=set)
    documents: set[str] = field(default_factory=set)
    described: set[str] | None = field(default_factory=set)
    deltas: dict[str, Delta] = field(default_factory=dict)
    graphs_known: bool = True

    def add(self, other: Changes) -> None:
        if not (self.graphs_known and other.graphs_known):
            self.graphs_known = False
            self.deltas.clear()
        else:
            for graph in other.graphs:
                theirs = other.deltas.get(graph)
                mine = self.deltas.pop(graph, None) if graph in self.graphs else {}
                if theirs is not None and mine is not None and len(mine) + len(theirs) <= DELTA_LIMIT:
                    self.deltas[graph] = {**mine, **theirs}
        self.graphs |= other.graphs
        self.papers |= other.papers
        self.decisions |= other.decisions
        self.documents |= other.documents
        self.described = None if self.described is None or other.described is None else \
            self.described | other.described

    def __bool__(self) -> bool:
        return bool(self.graphs or self.papers or self.decisions or self.documents or self.described is None
                    or not self.graphs_known)


class Keeper(Protocol):
    """A view of derived data kept current by writes."""

    name: str
    #: The modules ``after`` imports: imported before keepers run side by side (an import
    #: in two threads at once can deadlock).
    imports: tuple[str, ...]

    def before(self, store: Any) -> Any:
        """A token when the view holds the store's state now (None: nothing to keep)."""

    def after(self, store: Any, changes: Changes, token: Any) -> str | None:
        """Bring the view up to date after ``changes``; a line for the user when it could not."""


_KEEPERS: list[Keeper] = []


def register(keeper: Keeper) -> None:
    """Add ``keeper`` (once per name)."""
    if all(k.name != keeper.name for k in _KEEPERS):
        _KEEPERS.append(keeper)


def keepers() -> list[Keeper]:
    return list(_KEEPERS)


def _hand(store: Any, changes: Changes, kept: list[tuple[Keeper, Any]]) -> list[str | None]:
    """Each keeper's ``after`` (side by side when there are several): the line it returns,
    or one that says it raised (the write stands)."""
    for keeper, _token in kept:
        for module in keeper.imports:
            importlib.import_module(module)

    def keep(keeper: Keeper, token: Any) -> str | None:
        try:
            return keeper.after(store, changes, token)
        except Exception as error:  # noqa: BLE001 - derived data never fails the write that is done
            hint = getattr(error, "hint", "")  # (a KGError's fix: a bad setting, say)
            return f"the {keeper.name} could not be brought up to date ({error}){f'. {hint}' if hint else ''}"

    if len(kept) == 1:
        return [keep(*kept[0])]
    # (DuckDB, tantivy and the store's queries leave the GIL: the views are made at once)
    with ThreadPoolExecutor(len(kept), thread_name_prefix="kg-keeper") as pool:
        return list(pool.map(lambda pair: keep(*pair), kept))


@dataclass
class Watch:
    """The keepers' tokens for one store, and what was written to it since."""

    store: Any
    tokens: list[tuple[Keeper, Any]]
    changes: Changes = field(default_factory=Changes)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Called after each write is recorded (:class:`Background` wakes up).
    notify: Callable[[], None] | None = None

    def take(self) -> Changes:
        """The changes recorded so far, handed over once."""
        with self.lock:
            changes, self.changes = self.changes, Changes()
        return changes

    def finish(self, say: Callable[[str], None]) -> None:
        """Hand the changes to the keepers that have a view to keep (once), side by side;
        ``say`` each line they return, in the keepers' order. A keeper that raises is
        reported the same way: the write stands."""
        _WATCHES.pop(id(self.store), None)
        changes = self.take()
        kept = [(keeper, token) for keeper, token in self.tokens if token is not None]
        if changes and kept:
            for line in _hand(self.store, changes, kept):
                if line:
                    say(line)


class Background:
    """Derived data kept current under a long-running process (``kg serve``): the changes
    of each write are handed to the keepers in a thread of their own once the write has
    committed, while its reply goes out; writes that commit meanwhile are handed over
    together next. A keeper that could not keep its view (its line is said) keeps it again
    once the view is current again, as after ``kg analytics build``."""

    def __init__(self, store: Any, say: Callable[[str], None], chosen: Iterable[Keeper] | None = None, *,
                 pending: Callable[[bool], None] | None = None) -> None:
        """``pending`` is told, as each write commits, that there are changes to hand over
        (True), and once all are handed over (False): readers elsewhere may wait for them."""
        self.say = say
        self.pending = pending
        self.watch = watch(store, chosen)
        self._wake = threading.Event()
        self._stopping = False
        self.watch.notify = self._written
        self._thread = threading.Thread(target=self._run, name="kg-derived", daemon=True)
        self._thread.start()

    def _written(self) -> None:
        if self.pending is not None and any(token is not None for _keeper, token in self.watch.tokens):
            self.pending(True)
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            self.keep()
            if self._stopping:
                return

    def keep(self) -> None:
        """Hand what was written since to the keepers; then look again at the views that
        were not kept (each keeper's ``before``)."""
        changes = self.watch.take()
        # (a write may commit while a keeper reads the store: the graphs are read again whole)
        changes.deltas.clear()
        kept = [(keeper, token) for keeper, token in self.watch.tokens if token is not None]
        lines = dict(zip([id(k) for k, _t in kept], _hand(self.watch.store, changes, kept), strict=True)) \
            if changes and kept else {}
        tokens = []
        for keeper, token in self.watch.tokens:
            line = lines.get(id(keeper))
            if line:
                self.say(line)
            fresh = _look(keeper, self.watch.store)
            if fresh is not None:  # kept, or current again: its token now
                token = fresh
            elif line:  # not kept: stale until it is made current again
                token = None
            # else a write reached the view meanwhile: it keeps its token and catches up next time
            tokens.append((keeper, token))
        self.watch.tokens = tokens
        with self.watch.lock:  # (a write recorded after this says so again)
            if self.pending is not None and not self.watch.changes:
                self.pending(False)

    def close(self) -> None:
        """Hand over what is left and stop (when the process ends)."""
        _WATCHES.pop(id(self.watch.store), None)
        self._stopping = True
        self._wake.set()
        self._thread.join()


_WATCHES: dict[int, Watch] = {}


def _look(keeper: Keeper, store: Any) -> Any:
    """The keeper's token for its view now: None when the view is stale, or cannot be read."""
    try:
        return keeper.before(store)
    except Exception:  # noqa: BLE001 - a view that cannot be read is stale: the write goes on
        return None


def watch(store: Any, chosen: Iterable[Keeper] | None = None) -> Watch:
    """Start watching ``store``: each keeper (all registered ones by default) looks at its
    view now. A keeper whose look fails keeps nothing (as if its view were stale)."""
    found = Watch(store, [(keeper, _look(keeper, store))
                          for keeper in (list(chosen) if chosen is not None else keepers())])
    _WATCHES[id(store)] = found
    return found


def written(store: Any) -> Changes | None:
    """What the writes to ``store`` changed since it was watched (not yet handed to the
    keepers); None when none watches it. Read it, never change it."""
    found = _WATCHES.get(id(store))
    if found is None or found.store is not store:
        return None
    with found.lock:
        return found.changes


def record(store: Any, changes: Changes) -> bool:
    """What a committed write to ``store`` changed; False when none watches it."""
    found = _WATCHES.get(id(store))
    if found is None or found.store is not store:
        return False
    with found.lock:
        found.changes.add(changes)
    if found.notify is not None:
        found.notify()
    return True
