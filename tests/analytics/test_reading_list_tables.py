"""``kg reading list`` from fresh analytics tables: the rows, notes and techniques the store
gives, after notes of every kind and after a status change that the write keeps fresh."""

from __future__ import annotations

import json
from pathlib import Path

from pyoxigraph import Literal, NamedNode, Triple

import kg.answer
import queries
from kg.analytics import build
from kg.analytics.lookups import techniques_of
from kg.graphs import READING, ZOTERO
from kg.linking import listing
from kg.notes import add_note, delete_note
from kg.reading import listed_rows, reading_rows, resolve_paper
from kg.resolve import Resolver
from kg.store.base import Activity
from kg.vocab import RDF, TKG


def _from_tables(store, **params: str) -> list[dict]:
    found = kg.answer.answer(store, queries.get("reading-list"), params, Resolver(store))
    assert found.source == "duckdb", found.note
    return listed_rows(kg.answer.records(store, "reading-list", params, Resolver(store)))


def _by_paper(rows: list[dict]) -> dict[str, dict]:
    return {str(r["paper"]): r for r in rows}


def test_notes_from_the_tables_are_the_notes_the_store_shows(analysed_store, db_of) -> None:
    store = analysed_store
    paper = resolve_paper(store, "Ring Attention")
    mine = add_note(store, paper, "My own note")
    gone = add_note(store, paper, "A note deleted later")
    delete_note(store, NamedNode(gone.iri))
    copied, replaced = NamedNode(paper.value + "#zotero-a"), NamedNode(paper.value + "#zotero-b")
    with store.transaction(Activity("kg sync zotero")) as tx:
        tx.insert(ZOTERO, [Triple(copied, TKG.noteOf, paper),
                           Triple(copied, RDF.value, Literal("<p>From <b>Zotero</b></p>")),
                           Triple(replaced, TKG.noteOf, paper),
                           Triple(replaced, RDF.value, Literal("Zotero's old text"))])
        tx.insert(READING, [Triple(replaced, RDF.value, Literal("My text of the Zotero note"))])
    build(store, db_of(Path(store.location)))

    ours = _by_paper(_from_tables(store))[paper.value]
    theirs = _by_paper(reading_rows(store))[paper.value]
    assert sorted(ours["note"].split("\n\n")) == sorted(theirs["note"].split("\n\n"))
    assert set(ours["note"].split("\n\n")) == {mine.text, "From Zotero", "My text of the Zotero note"}
    assert ours["has_note"] and {k: v for k, v in ours.items() if k != "note"} == \
        {k: v for k, v in theirs.items() if k != "note"}


def test_the_whole_list_and_its_filters_from_the_tables_are_the_stores(analysed_store) -> None:
    store = analysed_store
    for params in ({}, {"status": "to-read"}, {"category": "ATTENTION"}):
        ours = _from_tables(store, **params)
        theirs = reading_rows(store, **params)
        assert ours, f"the corpus should list papers for {params}"
        assert sorted(map(repr, ours)) == sorted(map(repr, theirs))


def test_the_techniques_from_the_tables_are_the_ones_the_store_links(analysed_store) -> None:
    store = analysed_store
    papers = [str(r["paper"]) for r in reading_rows(store)]
    ours = techniques_of(store, papers)
    assert ours == listing.techniques_of(store, papers)
    assert any(len(v) > 1 for v in ours.values()), "the corpus should link papers to several techniques"


def test_stale_tables_leave_the_techniques_to_the_store(analysed_store) -> None:
    store = analysed_store
    with store.transaction(Activity("a test")) as tx:
        tx.insert(READING, [Triple(NamedNode("https://example.org/p"), TKG.hasNote, Literal("x"))])
    assert techniques_of(store, ["https://example.org/p"]) is None


def test_the_reading_counts_from_the_tables_are_the_ones_the_store_gives(analysed_store, db_of) -> None:
    from kg.analytics.lookups import reading_counts as from_tables
    from kg.counts import reading_counts

    store = analysed_store
    paper = resolve_paper(store, "Ring Attention")
    add_note(store, paper, "A note to count")
    build(store, db_of(Path(store.location)))  # (a note by the core alone says nothing: made fresh)
    found = from_tables(store)
    assert found is not None and found.with_note >= 1 and sum(found.statuses.values()) == found.papers
    assert reading_counts(store, found) == reading_counts(store)
    with store.transaction(Activity("a test")) as tx:
        tx.insert(READING, [Triple(NamedNode("https://example.org/p"), TKG.hasNote, Literal("x"))])
    assert from_tables(store) is None  # stale: kg stats asks the store


def test_after_a_status_change_the_list_is_still_read_from_the_tables(analysed_store_path, kg_cli) -> None:
    changed = kg_cli("reading", "set", "Ring Attention", "read", store=analysed_store_path)
    assert changed.returncode == 0, changed.stderr
    listed = kg_cli("reading", "list", "--status", "read", "-f", "json", store=analysed_store_path)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert any(r["title"].startswith("Ring Attention") for r in rows)
    assert all(r["status"] == "read" for r in rows)
    sparql = kg_cli("query", "reading-list", "-p", "status=read", "--sparql", "-f", "jsonl", store=analysed_store_path)
    tables = kg_cli("query", "reading-list", "-p", "status=read", "-f", "jsonl", store=analysed_store_path)
    assert "analytics tables (fresh)" in tables.stderr, tables.stderr
    assert sorted(tables.stdout.splitlines()) == sorted(sparql.stdout.splitlines())
    assert len(tables.stdout.splitlines()) == len(rows)
