"""The reader's notes (kg reading note, the reading page) and Zotero: a note written in TechKG
becomes a child note on the next sync, an edit made on either side reaches the other through
the three-way merge, and a deletion on either side deletes it on the other."""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode

from ingest.emulators.zotero import ZoteroEmulator
from ingest.zotero import ZoteroAPI
from ingest.zotero_sync import SyncOptions, sync
from kg.graphs import READING
from kg.notes import add_note, delete_note, edit_note, notes_of
from kg.reading import reading_rows
from tests.sync.conftest import USER_ID

GPIPE = NamedNode("https://arxiv.org/abs/1811.06965")


def _lib(emulator: ZoteroEmulator) -> Any:
    return emulator.library("user", USER_ID)


def _key(emulator: ZoteroEmulator, fragment: str) -> str:
    [item] = [i for i in _lib(emulator).top_items(include_trashed=True) if fragment in i["title"]]
    return str(item["key"])


def _children(emulator: ZoteroEmulator, key: str) -> list[dict[str, Any]]:
    """The child notes of an item, but those in the trash (where a note TechKG deletes goes)."""
    return [c for c in _lib(emulator).children(key) if not c.get("deleted")]


def _synced(store: Any, api: ZoteroAPI) -> Any:
    report = sync(store, api, SyncOptions())
    assert not report.failed and not report.duplicates, (report.failed, report.duplicates)
    return report


def _events(store: Any, note: str) -> list[tuple[str, str]]:
    rows = store.select(f"""SELECT ?action ?via ?t WHERE {{ GRAPH {READING} {{ ?e a tkg:NoteEvent ; tkg:note ?n ;
                              tkg:noteAction ?action ; tkg:via ?via ; prov:atTime ?t }} }} ORDER BY ?t""",
                        {"n": NamedNode(note)}).records()
    return [(str(r["action"]), str(r["via"])) for r in rows]


def test_a_note_written_in_techkg_reaches_zotero_and_edits_come_back(built_store, emulator: ZoteroEmulator,
                                                                     api: ZoteroAPI) -> None:
    _synced(built_store, api)
    key = _key(emulator, "GPipe")
    note = add_note(built_store, GPIPE, "Bubble fraction: (p-1)/(m+p-1).\n\nRe-materialises activations.")
    assert _children(emulator, key) == []
    _synced(built_store, api)
    [child] = _children(emulator, key)
    assert child["note"] == "<p>Bubble fraction: (p-1)/(m+p-1).</p><p>Re-materialises activations.</p>"

    # Edited in Zotero: the reader's text in the reading graph follows, as a note event via zotero.
    _lib(emulator).update_item(child["key"], note="<p>Bubble fraction: (p-1)/(m+p-1), shrinking with m.</p>")
    _synced(built_store, api)
    [seen] = notes_of(built_store, GPIPE)
    assert seen.iri == note.iri and seen.text == "Bubble fraction: (p-1)/(m+p-1), shrinking with m."
    assert seen.source == "reading"  # the reading graph's own text, brought in line
    assert _events(built_store, note.iri) == [("added", "cli"), ("edited", "zotero")]
    listed = next(r for r in reading_rows(built_store) if r["paper"] == GPIPE.value)
    assert listed["note"] == "Bubble fraction: (p-1)/(m+p-1), shrinking with m."

    # Edited in TechKG: Zotero follows.
    edit_note(built_store, NamedNode(note.iri), "Bubble fraction (p-1)/(m+p-1).", via="web")
    _synced(built_store, api)
    [child] = _children(emulator, key)
    assert child["note"] == "<p>Bubble fraction (p-1)/(m+p-1).</p>"

    # Deleted in TechKG: deleted in Zotero, and nothing comes back.
    delete_note(built_store, NamedNode(note.iri))
    assert notes_of(built_store, GPIPE) == []
    _synced(built_store, api)
    assert _children(emulator, key) == []
    report = _synced(built_store, api)
    assert report.changes == [] and notes_of(built_store, GPIPE) == []


def test_a_zotero_note_edited_or_deleted_in_techkg_changes_in_zotero(built_store, emulator: ZoteroEmulator,
                                                                     api: ZoteroAPI, pyzotero_client) -> None:
    _synced(built_store, api)
    key = _key(emulator, "GPipe")
    pyzotero_client.create_items([{"itemType": "note", "note": "<p>From my other laptop</p>"}], parentid=key)
    _synced(built_store, api)
    [theirs] = notes_of(built_store, GPIPE)
    assert theirs.source == "zotero" and theirs.text == "From my other laptop"
    edit_note(built_store, NamedNode(theirs.iri), "From my other laptop, corrected here")
    [shown] = notes_of(built_store, GPIPE)  # the reader's text replaces the copy at once
    assert shown.text == "From my other laptop, corrected here"
    _synced(built_store, api)
    [child] = _children(emulator, key)
    assert child["note"] == "<p>From my other laptop, corrected here</p>"
    delete_note(built_store, NamedNode(theirs.iri))
    listed = next(r for r in reading_rows(built_store) if r["paper"] == GPIPE.value)
    assert listed["note"] is None  # hidden at once, although the zotero graph still holds its copy
    _synced(built_store, api)
    assert _children(emulator, key) == []


def test_a_note_deleted_in_zotero_leaves_the_reading_graph(built_store, emulator: ZoteroEmulator,
                                                          api: ZoteroAPI) -> None:
    _synced(built_store, api)
    key = _key(emulator, "GPipe")
    note = add_note(built_store, GPIPE, "Short-lived")
    _synced(built_store, api)
    [child] = _children(emulator, key)
    _lib(emulator).delete_items([child["key"]])
    _synced(built_store, api)
    assert notes_of(built_store, GPIPE) == []
    assert _events(built_store, note.iri) == [("added", "cli"), ("deleted", "zotero")]
