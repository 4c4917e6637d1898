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
  and finishes when the command ends; ``kg serve`` finishes each write's watch in the
  background.

The core knows nothing of the keepers: it records and hands over. A keeper never fails
the write; what it cannot do, it says.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Changes", "Keeper", "Watch", "keepers", "record", "register", "watch"]


@dataclass
class Changes:
    """What writes changed: graph IRIs, papers (IRIs) whose reading state changed, lineage
    decisions as (child, parent) technique IRIs, and the papers and techniques (IRIs) whose
    own facts changed (``documents``) with the graphs whose every change they name
    (``described``; None: not known, every graph that changed may hold others)."""

    graphs: set[str] = field(default_factory=set)
    papers: set[str] = field(default_factory=set)
    decisions: set[tuple[str, str]] = field(default_factory=set)
    documents: set[str] = field(default_factory=set)
    described: set[str] | None = field(default_factory=set)

    def add(self, other: Changes) -> None:
        self.graphs |= other.graphs
        self.papers |= other.papers
        self.decisions |= other.decisions
        self.documents |= other.documents
        self.described = None if self.described is None or other.described is None else \
            self.described | other.described

    def __bool__(self) -> bool:
        return bool(self.graphs or self.papers or self.decisions or self.documents or self.described is None)


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


@dataclass
class Watch:
    """The keepers' tokens for one store, and what was written to it since."""

    store: Any
    tokens: list[tuple[Keeper, Any]]
    changes: Changes = field(default_factory=Changes)

    def finish(self, say: Callable[[str], None]) -> None:
        """Hand the changes to the keepers that have a view to keep (once), side by side;
        ``say`` each line they return, in the keepers' order. A keeper that raises is
        reported the same way: the write stands."""
        _WATCHES.pop(id(self.store), None)
        changes, self.changes = self.changes, Changes()  # handed over once
        kept = [(keeper, token) for keeper, token in self.tokens if token is not None]
        if not changes or not kept:
            return
        for keeper, _token in kept:
            for module in keeper.imports:
                importlib.import_module(module)

        def keep(keeper: Keeper, token: Any) -> str | None:
            try:
                return keeper.after(self.store, changes, token)
            except Exception as error:  # noqa: BLE001 - derived data never fails the write that is done
                return f"the {keeper.name} could not be brought up to date ({error})"

        if len(kept) == 1:
            lines = [keep(*kept[0])]
        else:  # (DuckDB, tantivy and the store's queries leave the GIL: the views are made at once)
            with ThreadPoolExecutor(len(kept), thread_name_prefix="kg-keeper") as pool:
                lines = list(pool.map(lambda pair: keep(*pair), kept))
        for line in lines:
            if line:
                say(line)


_WATCHES: dict[int, Watch] = {}


def watch(store: Any, chosen: Iterable[Keeper] | None = None) -> Watch:
    """Start watching ``store``: each keeper (all registered ones by default) looks at its
    view now. A keeper whose look fails keeps nothing (as if its view were stale)."""
    tokens = []
    for keeper in (list(chosen) if chosen is not None else keepers()):
        try:
            token = keeper.before(store)
        except Exception:  # noqa: BLE001 - a view that cannot be read is stale: the write goes on
            token = None
        tokens.append((keeper, token))
    found = Watch(store, tokens)
    _WATCHES[id(store)] = found
    return found


def record(store: Any, changes: Changes) -> bool:
    """What a committed write to ``store`` changed; False when none watches it."""
    found = _WATCHES.get(id(store))
    if found is not None and found.store is store:
        found.changes.add(changes)
        return True
    return False
