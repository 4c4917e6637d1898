"""Derived data kept current by the write that changes the graph: one mechanism.

Derived data (the DuckDB analytics tables and their stored answers; the search index and
the links graph have their own incremental updates, called by the CLI) can always be
made again from the graph, but making it again whole costs seconds to minutes at arXiv
scale. So each write says what it changed (:class:`Changes`: the graphs it wrote, the
papers whose reading state changed, the lineage decisions it made) and each *keeper* of
derived data brings its view up to date from that, patching where it can:

- :class:`Keeper` is what a consumer registers (:func:`register`; the CLI registers the
  analytics tables' keeper). ``before(store)`` looks at the view before the write: it gives
  a token when the view is current (None: stale already, nothing to keep), and
  ``after(store, changes, token)`` brings it up to date after the write, or returns a line
  that says why it could not and what to run.
- :func:`watch` starts watching a store (each keeper's ``before``), every committed
  transaction on that store adds what it changed (:func:`record`, called by
  :class:`kg.store.base.Transaction`), and :meth:`Watch.finish` hands the changes to the
  keepers (each keeper's ``after``), once per command. The CLI watches the writer it
  opens and finishes when the command ends.

The core knows nothing of the keepers: it records and hands over. A keeper never fails
the write; what it cannot do, it says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Changes", "Keeper", "Watch", "keepers", "record", "register", "watch"]


@dataclass
class Changes:
    """What writes changed: graph IRIs, papers (IRIs) whose reading state changed, and
    lineage decisions as (child, parent) technique IRIs."""

    graphs: set[str] = field(default_factory=set)
    papers: set[str] = field(default_factory=set)
    decisions: set[tuple[str, str]] = field(default_factory=set)

    def add(self, other: Changes) -> None:
        self.graphs |= other.graphs
        self.papers |= other.papers
        self.decisions |= other.decisions

    def __bool__(self) -> bool:
        return bool(self.graphs or self.papers or self.decisions)


class Keeper(Protocol):
    """A view of derived data kept current by writes."""

    name: str

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
        """Hand the changes to the keepers whose view was current (once); ``say`` each
        line they return. A keeper that raises is reported the same way: the write stands."""
        _WATCHES.pop(id(self.store), None)
        if not self.changes:
            return
        for keeper, token in self.tokens:
            if token is None:
                continue
            try:
                line = keeper.after(self.store, self.changes, token)
            except Exception as error:  # noqa: BLE001 - derived data never fails the write that is done
                line = f"the {keeper.name} could not be brought up to date ({error})"
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


def record(store: Any, changes: Changes) -> None:
    """What a committed write to ``store`` changed (nothing happens when none watches it)."""
    found = _WATCHES.get(id(store))
    if found is not None and found.store is store:
        found.changes.add(changes)
