"""The reader's own techniques, and their facts on the catalog's: the ``my-techniques`` graph.

- :mod:`kg.owntech.model`: what the graph holds (:class:`Mine`) and its triples, in the
  catalog's own vocabulary, so that every query over the union sees the reader's techniques
  as it sees the catalog's;
- :mod:`kg.owntech.checks`: the checks on what a reader types (dates, ids, relations,
  dimensions, arXiv ids and DOIs);
- :mod:`kg.owntech.known`: what the rest of the store says about techniques;
- :mod:`kg.owntech.edit`: adding, changing and removing, with every refusal explained;
- :mod:`kg.owntech.overrides`: the rule by which the reader's value of a single-valued fact
  replaces the catalog's in every view;
- :mod:`kg.owntech.toml`: ``kg technique export`` / ``import`` in the catalog's TOML schema.

The functions below are what the command line and the workbench call: each reads what it
needs, checks, and writes the reader's graph in one transaction (a snapshot first, so that
``kg undo`` takes it back), or raises before writing anything.
"""

from __future__ import annotations

import datetime as dt

from pyoxigraph import NamedNode

from kg.owntech.edit import Change, Outcome, apply_change, context, remove_entry, save
from kg.owntech.model import VALUES, Entry, Mine
from kg.store.base import GraphStore, Transaction

__all__ = [
    "VALUES",
    "Change",
    "Entry",
    "Mine",
    "Outcome",
    "add_technique",
    "edit_technique",
    "remove_technique",
]


def add_technique(store: GraphStore, change: Change, *, now: dt.datetime | None = None) -> Outcome:
    """Add a technique of the reader's own (``change.name`` names it)."""
    known, mine = context(store)
    outcome = apply_change(store, known, mine, change, now=now)
    save(store, mine, "kg technique add", {"added": 1})
    return outcome


def edit_technique(store: GraphStore, technique: str, change: Change) -> Outcome:
    """Change the reader's technique called ``technique``, or their facts on a catalog one."""
    known, mine = context(store)
    outcome = apply_change(store, known, mine, change, technique=technique)
    if outcome.action != "unchanged":
        save(store, mine, "kg technique edit", {"updated": 1})
    return outcome


def remove_technique(store: GraphStore, technique: str) -> Outcome:
    """Remove the reader's technique called ``technique`` (and stop following it), or their
    facts on a catalog technique. ``kg undo`` brings it back."""
    from kg.follows import chosen, write_follows

    known, mine = context(store)
    outcome = remove_entry(known, mine, technique)
    picked = chosen(store)
    iri = outcome.entry.iri.value

    def unfollow(tx: Transaction) -> None:
        if outcome.entry.own and picked is not None and iri in picked:
            write_follows(tx, {t: s for t, s in picked.items() if t != iri})
            outcome.notes.append("you no longer follow it")

    save(store, mine, "kg technique remove", {"removed": 1}, also=unfollow)
    return outcome


def technique_node(entry: Entry) -> NamedNode:
    return entry.iri
