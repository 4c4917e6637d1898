"""The reader's notes on papers: written with ``kg reading note`` or on the reading page, kept in
the ``reading`` graph, synced to Zotero as child notes.

A note is a ``tkg:Note`` as the Zotero sync already keeps one: ``tkg:noteOf`` its paper and
its text in ``rdf:value`` as Zotero holds a child note (HTML: one ``<p>`` per paragraph), with
``dcterms:created`` and ``dcterms:modified``. Every change is a ``tkg:NoteEvent`` beside it
(added, edited or deleted; when; where: cli, web or zotero; the text it left), and each
write keeps a snapshot of the reader's graphs first, so ``kg undo`` takes it back.

A note may be the reader's own (``note/reader/<uuid>``) or one that came from Zotero (its
copy lives in the ``zotero`` graph). Editing either writes the reader's text into the
reading graph, where it replaces the copy's (:func:`kg.reading.prefer_reading`); deleting either leaves
``tkg:deletedAt`` there, which hides the copy. The next ``kg sync zotero`` sees the graph's
notes so (:func:`synced_notes`) and merges them three-way with Zotero's: a new note becomes
a child note, an edit an update, a deletion a deletion; and what the merge decides comes
back into the reading graph (:func:`settle`).
"""

from __future__ import annotations

import datetime as dt
import html
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyoxigraph import NamedNode, Triple

from kg.errors import KGError, NotFoundError
from kg.graphs import READING, ZOTERO
from kg.reading import note_text, prefer_reading
from kg.store.base import Activity, GraphStore, Transaction
from kg.vocab import DCTERMS, ID, PROV, RDF, TKG, datetime_literal, text

__all__ = [
    "MAX_NOTE",
    "Note",
    "PaperNotes",
    "add_note",
    "delete_note",
    "edit_note",
    "note_html",
    "notes_by_paper",
    "notes_of",
    "settle",
    "synced_notes",
]

#: The longest note the workbench and the command line take (characters).
MAX_NOTE = 100_000


@dataclass(frozen=True)
class Note:
    """One note of a paper as the reader sees it."""

    iri: str
    paper: str
    text: str
    html: str
    modified: str | None = None
    #: Where its text comes from: "reading" (written here) or "zotero" (a copy of Zotero's).
    source: str = "reading"

    def as_dict(self) -> dict[str, str | None]:
        return {"note": self.iri, "paper": self.paper, "text": self.text, "modified": self.modified,
                "source": self.source}


def note_html(value: str) -> str:
    """Plain text as a Zotero note's HTML: a ``<p>`` per paragraph (blank-line separated), its
    lines joined by ``<br>``; every character escaped."""
    paragraphs = [p.strip("\n") for p in value.replace("\r\n", "\n").strip().split("\n\n") if p.strip()]
    return "".join("<p>" + "<br>".join(html.escape(line.strip()) for line in p.split("\n")) + "</p>"
                   for p in paragraphs)


def notes_by_paper(store: GraphStore, papers: Sequence[NamedNode]) -> dict[str, list[Note]]:
    """paper IRI → the notes of it the reader sees, newest first, for ``papers`` (one query)."""
    if not papers:
        return {}
    rows = store.select(
        f"""SELECT ?paper ?note ?body ?modified ?g WHERE {{ ?note tkg:noteOf ?paper .
              GRAPH ?g {{ ?note rdf:value ?body OPTIONAL {{ ?note dcterms:modified ?modified }} }}
              {prefer_reading("?note", "?body")} }}""", {"paper": list(papers)}).records()
    found: dict[str, dict[str, Note]] = {}
    for r in rows:
        source = "reading" if r["g"] == READING.value else "zotero"
        of = found.setdefault(r["paper"], {})
        if r["note"] in of and of[r["note"]].source == "reading":
            continue
        of[r["note"]] = Note(r["note"], r["paper"], note_text(str(r["body"])), str(r["body"]),
                             str(r["modified"]) if r["modified"] is not None else None, source)
    return {paper: sorted(notes.values(), key=lambda n: (n.modified or "", n.iri), reverse=True)
            for paper, notes in found.items()}


def notes_of(store: GraphStore, paper: NamedNode) -> list[Note]:
    """The notes of ``paper`` the reader sees, newest first."""
    return notes_by_paper(store, [paper]).get(paper.value, [])


def _event(paper: NamedNode, note: NamedNode, action: str, body: str, via: str, at: dt.datetime) -> list[Triple]:
    event = ID["reading-event/" + uuid.uuid4().hex]
    return [Triple(event, RDF.type, TKG.NoteEvent), Triple(event, TKG.paper, paper), Triple(event, TKG.note, note),
            Triple(event, TKG.noteAction, text(action, None)), Triple(event, RDF.value, text(body, None)),
            Triple(event, PROV.atTime, datetime_literal(at, precise=True)), Triple(event, TKG.via, text(via, None))]


def _clear(tx: Transaction, note: NamedNode, *predicates: str) -> None:
    for predicate in predicates:
        tx.update(f"DELETE WHERE {{ GRAPH {READING} {{ {note} {predicate} ?o }} }}", touches=[READING])


def _write(tx: Transaction, paper: NamedNode, note: NamedNode, body: str, action: str, via: str,
           at: dt.datetime, *, created: bool) -> None:
    stamp = datetime_literal(at, precise=True)  # two notes written within a second keep their order
    _clear(tx, note, "rdf:value", "dcterms:modified", "tkg:deletedAt")
    triples = [Triple(note, RDF.type, TKG.Note), Triple(note, TKG.noteOf, paper), Triple(note, RDF.value,
                                                                                           text(body, None)),
               Triple(note, DCTERMS.modified, stamp), *_event(paper, note, action, body, via, at)]
    if created:
        triples.append(Triple(note, DCTERMS.created, stamp))
    tx.insert(READING, triples)


def _check(value: str) -> str:
    if not value.strip():
        raise KGError("a note cannot be empty", hint="Write its text; to remove a note, delete it instead.")
    if len(value) > MAX_NOTE:
        raise KGError(f"the note is {len(value):,} characters; at most {MAX_NOTE:,} are kept",
                      hint="Keep the note shorter, or link to a longer text from it.")
    return note_html(value)


def _transaction(store: GraphStore, label: str, stats: dict[str, int]) -> Transaction:
    tx = store.transaction(Activity(label, stats=stats))
    tx.snapshot_first()  # a small change, but one kg undo must take back
    return tx


def add_note(store: GraphStore, paper: NamedNode, value: str, *, via: str = "cli",
             at: dt.datetime | None = None) -> Note:
    """Add a note to ``paper`` (which the graph must hold)."""
    body = _check(value)
    if not store.ask("ASK { ?p a bibo:Document }", {"p": paper}):
        raise NotFoundError(f"the graph holds no paper {paper.value}",
                            hint="kg reading set PAPER to-read --add puts a paper the graph lacks on your list.")
    at = at or dt.datetime.now(dt.UTC)
    note = ID["note/reader/" + uuid.uuid4().hex]
    with _transaction(store, f"add a note ({via})", {"added": 1}) as tx:
        _write(tx, paper, note, body, "added", via, at, created=True)
    return Note(note.value, paper.value, note_text(body), body, datetime_literal(at).value)


def _find(store: GraphStore, note: NamedNode) -> Note:
    rows = store.select("SELECT ?paper WHERE { ?note tkg:noteOf ?paper }", {"note": note}).records()
    for row in rows:
        for found in notes_of(store, NamedNode(row["paper"])):
            if found.iri == note.value:
                return found
    raise NotFoundError(f"there is no note {note.value}", hint="kg reading note PAPER --show lists a paper's notes.")


def edit_note(store: GraphStore, note: NamedNode, value: str, *, via: str = "cli",
              at: dt.datetime | None = None) -> tuple[Note, bool]:
    """Replace the text of ``note``; False when the text is what it was."""
    body = _check(value)
    old = _find(store, note)
    if note_text(old.html) == note_text(body):
        return old, False
    at = at or dt.datetime.now(dt.UTC)
    paper = NamedNode(old.paper)
    with _transaction(store, f"edit a note ({via})", {"updated": 1}) as tx:
        _write(tx, paper, note, body, "edited", via, at, created=False)
    return Note(note.value, old.paper, note_text(body), body, datetime_literal(at).value), True


def delete_note(store: GraphStore, note: NamedNode, *, via: str = "cli", at: dt.datetime | None = None) -> Note:
    """Delete ``note``: it no longer shows, and the next Zotero sync deletes the child note."""
    old = _find(store, note)
    at = at or dt.datetime.now(dt.UTC)
    paper = NamedNode(old.paper)
    with _transaction(store, f"delete a note ({via})", {"removed": 1}) as tx:
        _clear(tx, note, "rdf:value", "dcterms:modified")
        tx.insert(READING, [Triple(note, RDF.type, TKG.Note), Triple(note, TKG.noteOf, paper),
                            Triple(note, TKG.deletedAt, datetime_literal(at)),
                            *_event(paper, note, "deleted", old.html, via, at)])
    return old


# -- the Zotero sync ---------------------------------------------------------------------


@dataclass
class PaperNotes:
    """A paper's notes as the Zotero sync sees the graph: the copies of Zotero's (``zotero``
    graph), the reader's texts and deletions (``reading`` graph), and when each changed."""

    zotero: dict[str, str] = field(default_factory=dict)
    reader: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    modified: dict[str, dt.datetime] = field(default_factory=dict)

    @property
    def shown(self) -> dict[str, str]:
        """The graph's side of the merge: the reader's text where they gave one, no deleted note."""
        return {k: v for k, v in {**self.zotero, **self.reader}.items() if k not in self.deleted}


def _moment(value: object) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def synced_notes(store: GraphStore, papers: Sequence[NamedNode]) -> dict[str, PaperNotes]:
    """paper IRI → its :class:`PaperNotes`, for ``papers``."""
    out: dict[str, PaperNotes] = {}
    if not papers:
        return out
    rows = store.select(
        f"""SELECT ?paper ?note ?g ?body ?modified ?gone WHERE {{ GRAPH ?g {{ ?note tkg:noteOf ?paper
              OPTIONAL {{ ?note rdf:value ?body }} OPTIONAL {{ ?note dcterms:modified ?modified }}
              OPTIONAL {{ ?note tkg:deletedAt ?gone }} }} FILTER(?g = {ZOTERO} || ?g = {READING}) }}""",
        {"paper": list(papers)}).records()
    for r in rows:
        notes = out.setdefault(r["paper"], PaperNotes())
        reading = r["g"] == READING.value
        if r["gone"] is not None and reading:
            notes.deleted.add(r["note"])
        if r["body"] is not None:
            (notes.reader if reading else notes.zotero)[r["note"]] = str(r["body"])
        moment = _moment(r["modified"]) if r["modified"] is not None else None
        if moment is not None and (reading or r["note"] not in notes.modified):
            notes.modified[r["note"]] = moment
    return out


def settle(tx: Transaction, paper: NamedNode, notes: PaperNotes | None, merged: Mapping[str, str],
           *, at: dt.datetime) -> None:
    """After a sync merged ``paper``'s notes into ``merged``: bring the reader's texts in the
    reading graph in line (an edit made in Zotero replaces theirs, a note deleted in Zotero
    goes, a deletion Zotero overruled is lifted), each change a note event ``via zotero``."""
    if notes is None:
        return
    for iri, body in notes.reader.items():
        node = NamedNode(iri)
        if iri not in merged and iri not in notes.deleted:
            _clear(tx, node, "rdf:value", "dcterms:modified")
            tx.insert(READING, [Triple(node, TKG.deletedAt, datetime_literal(at)),
                                *_event(paper, node, "deleted", body, "zotero", at)])
        elif iri in merged and merged[iri] != body:
            _write(tx, paper, node, merged[iri], "edited", "zotero", at, created=False)
    for iri in notes.deleted:
        if iri in merged:  # edited in Zotero while deleted here, and Zotero's edit won
            _clear(tx, NamedNode(iri), "tkg:deletedAt")
            if iri in notes.reader:
                _write(tx, paper, NamedNode(iri), merged[iri], "edited", "zotero", at, created=False)
