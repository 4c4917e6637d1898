"""The three-way merge of one paper's synced record: pure logic, no I/O.

A :class:`Record` is what the sync keeps in step between the graph and Zotero for one
paper: whether it exists (``present``), its title, its reading status, its tags, its
reading-list categories and its notes. :func:`merge` compares the graph's record and
Zotero's with the last record both agreed on (the *base*, kept in the sync state),
field by field:

- a field changed on one side only takes that side's value;
- tags and categories merge element by element (an addition or a removal on either
  side is kept), so they never conflict;
- notes merge note by note, like single fields;
- a field changed on both sides to different values is a :class:`Conflict`, decided
  by the rule: ``newest`` (the later change wins; a tie goes to the graph), ``zotero``
  or ``graph``. Every conflict is reported with both values, so the losing one can be
  recovered;
- a deletion never removes something the other side edited since the base: the edit
  wins whatever the rule, and the case is reported as a conflict
  (rule ``edit-beats-delete``).

With ``resolve=False`` (reading Zotero without writing to it) conflicting fields keep
the graph's value and are reported as ``pending``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["FIELDS", "RULES", "Conflict", "Merged", "Record", "Stamps", "agreed_base", "merge"]

FIELDS = ("present", "title", "status", "tags", "categories", "notes")
RULES = ("newest", "zotero", "graph")
EDIT_BEATS_DELETE = "edit-beats-delete"
PENDING = "pending"


@dataclass(frozen=True)
class Record:
    """One paper's synced fields. ``notes`` maps a note's id (its IRI) to its text."""

    present: bool = True
    title: str | None = None
    status: str | None = None
    tags: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()
    notes: tuple[tuple[str, str], ...] = ()

    @classmethod
    def make(cls, *, present: bool = True, title: str | None = None, status: str | None = None,
             tags: Iterable[str] = (), categories: Iterable[str] = (),
             notes: Mapping[str, str] | None = None) -> Record:
        return cls(present, title or None, status or None, frozenset(tags), frozenset(categories),
                   tuple(sorted((notes or {}).items())))

    @property
    def note_map(self) -> dict[str, str]:
        return dict(self.notes)

    def with_notes(self, notes: Mapping[str, str]) -> Record:
        return replace(self, notes=tuple(sorted(notes.items())))

    def to_json(self) -> dict[str, Any]:
        return {"present": self.present, "title": self.title, "status": self.status,
                "tags": sorted(self.tags), "categories": sorted(self.categories), "notes": self.note_map}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Record:
        return cls.make(present=bool(data.get("present", True)), title=data.get("title"),
                        status=data.get("status"), tags=data.get("tags") or (),
                        categories=data.get("categories") or (), notes=data.get("notes") or {})

    def value(self, name: str) -> Any:
        """A field's value; ``note:<id>`` names one note (None when absent)."""
        if name.startswith("note:"):
            return self.note_map.get(name[5:])
        return getattr(self, name)

    def changed_fields(self, other: Record) -> list[str]:
        """The fields (and ``note:<id>``s) whose values differ between the two records."""
        out = [name for name in FIELDS if name != "notes" and getattr(self, name) != getattr(other, name)]
        mine, theirs = self.note_map, other.note_map
        out += [f"note:{nid}" for nid in sorted(set(mine) | set(theirs)) if mine.get(nid) != theirs.get(nid)]
        return out


EMPTY = Record()


@dataclass(frozen=True)
class Stamps:
    """When each field last changed on one side, for the ``newest`` rule."""

    status: dt.datetime | None = None
    item: dt.datetime | None = None
    notes: Mapping[str, dt.datetime] = field(default_factory=dict)

    def of(self, name: str) -> dt.datetime | None:
        if name == "status":
            return self.status or self.item
        if name.startswith("note:"):
            return self.notes.get(name[5:]) or self.item
        return self.item


@dataclass(frozen=True)
class Conflict:
    """A field changed on both sides to different values, and how it was decided."""

    field: str
    base: Any
    graph: Any
    zotero: Any
    winner: str
    rule: str

    @property
    def loser(self) -> str:
        return "zotero" if self.winner == "graph" else "graph"

    @property
    def winning_value(self) -> Any:
        return self.graph if self.winner == "graph" else self.zotero

    @property
    def losing_value(self) -> Any:
        return self.zotero if self.winner == "graph" else self.graph


@dataclass(frozen=True)
class Merged:
    result: Record
    conflicts: tuple[Conflict, ...] = ()

    def to_graph(self, graph: Record | None) -> list[str]:
        """The fields the graph must change to hold the result."""
        return self.result.changed_fields(graph) if graph is not None else list(FIELDS)

    def to_zotero(self, zotero: Record | None) -> list[str]:
        return self.result.changed_fields(zotero) if zotero is not None else list(FIELDS)


def _as_json(value: Any) -> Any:
    return sorted(value) if isinstance(value, frozenset) else value


class _Decider:
    def __init__(self, rule: str, graph: Stamps, zotero: Stamps, resolve: bool) -> None:
        if rule not in RULES:
            raise ValueError(f"unknown conflict rule {rule!r}; use one of {', '.join(RULES)}")
        self.rule = rule
        self.graph = graph
        self.zotero = zotero
        self.resolve = resolve
        self.conflicts: list[Conflict] = []

    def winner(self, name: str) -> str:
        if not self.resolve:
            return "graph"
        if self.rule != "newest":
            return self.rule
        tg, tz = self.graph.of(name), self.zotero.of(name)
        return "zotero" if tz is not None and (tg is None or tz > tg) else "graph"

    def scalar(self, name: str, b: Any, g: Any, z: Any) -> Any:
        if g == z:
            return g
        if g == b:
            return z
        if z == b:
            return g
        if name.startswith("note:") and (g is None) != (z is None):
            winner, rule = ("zotero", EDIT_BEATS_DELETE) if g is None else ("graph", EDIT_BEATS_DELETE)
        else:
            winner, rule = self.winner(name), self.rule if self.resolve else PENDING
        self.conflicts.append(Conflict(name, _as_json(b), _as_json(g), _as_json(z), winner, rule))
        return g if winner == "graph" else z


def _merge_set(b: frozenset[str], g: frozenset[str], z: frozenset[str]) -> frozenset[str]:
    return (g & z) | (g - b) | (z - b)


def _edited(record: Record, base: Record) -> bool:
    return any(name != "present" for name in record.changed_fields(base))


def merge(base: Record | None, graph: Record | None, zotero: Record | None, *, rule: str = "newest",
          graph_stamps: Stamps | None = None, zotero_stamps: Stamps | None = None,
          resolve: bool = True) -> Merged:
    """Merge the graph's and Zotero's records of one paper against their base.

    ``graph`` is None for an item only Zotero has (it becomes a paper), ``zotero`` None
    for a paper only the graph has (it becomes an item); ``base`` is None when the two
    were never synced (every difference is then a change on both sides).
    """
    if graph is None and zotero is None:
        raise ValueError("nothing to merge: neither side has the record")
    if graph is None:
        assert zotero is not None
        return Merged(zotero)
    if zotero is None:
        return Merged(graph)
    b = base if base is not None and base.present else EMPTY
    decide = _Decider(rule, graph_stamps or Stamps(), zotero_stamps or Stamps(), resolve)
    title = decide.scalar("title", b.title, graph.title, zotero.title)
    status = decide.scalar("status", b.status, graph.status, zotero.status)
    tags = _merge_set(b.tags, graph.tags, zotero.tags)
    categories = _merge_set(b.categories, graph.categories, zotero.categories)
    bn, gn, zn = b.note_map, graph.note_map, zotero.note_map
    notes: dict[str, str] = {}
    for nid in sorted(set(bn) | set(gn) | set(zn)):
        text = decide.scalar(f"note:{nid}", bn.get(nid), gn.get(nid), zn.get(nid))
        if text is not None:
            notes[nid] = text
    present = graph.present and zotero.present
    if graph.present != zotero.present:
        # One side deleted the item. The deletion stands unless the other side edited it
        # since the base: then the edit wins, and it is reported.
        keeper, kept = ("graph", graph) if graph.present else ("zotero", zotero)
        if base is not None and _edited(kept, b):
            present = True
            decide.conflicts.append(Conflict("present", True, graph.present, zotero.present, keeper,
                                             EDIT_BEATS_DELETE))
    result = Record(present, title, status, tags, categories, tuple(sorted(notes.items())))
    return Merged(result, tuple(decide.conflicts))


def agreed_base(base: Record | None, result: Record, zotero: Record) -> Record:
    """The new base after a sync: each field (each note) takes the merged value where
    Zotero now holds it, and keeps the old base where Zotero does not (yet) — so a
    change that could not be written is still seen as a change next time."""
    old = base if base is not None else EMPTY
    values: dict[str, Any] = {}
    for name in FIELDS:
        if name == "notes":
            continue
        values[name] = getattr(result, name) if getattr(zotero, name) == getattr(result, name) else getattr(old, name)
    rn, zn, on = result.note_map, zotero.note_map, old.note_map
    notes: dict[str, str] = {}
    for nid in set(rn) | set(zn) | set(on):
        value = rn.get(nid) if zn.get(nid) == rn.get(nid) else on.get(nid)
        if value is not None:
            notes[nid] = value
    return Record(values["present"], values["title"], values["status"], values["tags"], values["categories"],
                  tuple(sorted(notes.items())))
