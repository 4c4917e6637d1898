"""Two-way sync scenarios, driven by the real pyzotero client against the emulator."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from pyoxigraph import NamedNode

from ingest.emulators.zotero import ZoteroEmulator
from ingest.zotero import ZoteroAPI
from ingest.zotero_sync import SyncOptions, conflict_rows, sync
from kg.graphs import CATALOG, READING, READING_LIST, ZOTERO, ZOTERO_SYNC
from kg.reading import current_statuses, reading_rows, set_status
from kg.validate import validate_store, validate_triples
from tests.sync import graph_edits
from tests.sync.conftest import USER_ID
from tests.sync.zotero_library import fill_with_reading_list

GPIPE = NamedNode("https://arxiv.org/abs/1811.06965")
ZERO = NamedNode("https://arxiv.org/abs/1910.02054")


def _lib(emulator: ZoteroEmulator):
    return emulator.library("user", USER_ID)


def _by_title(emulator: ZoteroEmulator, fragment: str) -> dict[str, Any]:
    [item] = [i for i in _lib(emulator).top_items(include_trashed=True) if fragment in i["title"]]
    return item


def _status_line(item: dict[str, Any]) -> str | None:
    m = re.search(r"^Read_Status: (.*)$", item.get("extra", ""), re.MULTILINE)
    return m.group(1) if m else None


def _synced(store, api: ZoteroAPI, **options: Any):
    report = sync(store, api, SyncOptions(**options))
    assert not report.failed and not report.duplicates, (report.failed, report.duplicates)
    return report


def _valid(store) -> list[object]:
    """SHACL violations in the graphs the sync writes (and the reading state it changes)."""
    triples = [t for g in (READING, READING_LIST, ZOTERO, ZOTERO_SYNC) for t in store.triples(g)]
    triples += [t for t in store.triples(CATALOG) if t.predicate.value == "http://purl.org/dc/terms/title"]
    return validate_triples("\n".join(f"{t.subject} {t.predicate} {t.object} ." for t in triples))


def _quiet(store, api: ZoteroAPI, emulator: ZoteroEmulator, **options: Any) -> None:
    """A sync right after a sync changes nothing and costs one request."""
    emulator.requests.clear()
    report = sync(store, api, SyncOptions(**options))
    assert report.changes == [] and report.conflicts == [], report.changes
    assert len(emulator.requests) == 1 and emulator.request_count("POST") == 0


# -- first syncs ------------------------------------------------------------------------------------


def test_first_sync_fills_an_empty_library_from_the_reading_list(built_store, emulator: ZoteroEmulator,
                                                                 api: ZoteroAPI) -> None:
    report = _synced(built_store, api)
    assert report.counts()["zotero_created"] == 53
    items = _lib(emulator).top_items()
    assert len(items) == 53
    assert Counter(_status_line(i) for i in items) == {"To Read": 45, "Read": 8}
    assert all(re.search(r"^Read_Status_Date: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", i["extra"], re.MULTILINE)
               for i in items)
    names = {c["name"] for c in _lib(emulator).collections.values()}
    assert len(names) == len({r["categories"][0] for r in reading_rows(built_store)})
    assert "LLM Training / Distributed Training" in names
    gpipe = _by_title(emulator, "GPipe")
    assert gpipe["itemType"] == "conferencePaper" and gpipe["proceedingsTitle"] == "NeurIPS 2019"
    assert "arXiv: 1811.06965" in gpipe["extra"] and gpipe["creators"][0]["lastName"] == "Huang"
    preprint = _by_title(emulator, "Megatron-LM: Training Multi-Billion")
    assert preprint["itemType"] == "preprint" and preprint["archiveID"] == "arXiv:1909.08053"
    assert Counter(i["itemType"] for i in items)["journalArticle"] >= 1
    writes = [r for r in emulator.requests if r.method == "POST"]
    assert writes and all(r.if_unmodified is not None for r in writes)
    assert all(r.write_token and 5 <= len(r.write_token) <= 32 for r in writes)
    assert all(r.objects <= 50 for r in writes) and max(r.objects for r in writes) == 50
    assert _valid(built_store) == []
    _quiet(built_store, api, emulator)


def test_first_sync_fills_an_empty_graph_from_a_zotero_library(fresh_store, emulator: ZoteroEmulator,
                                                               api: ZoteroAPI) -> None:
    fill_with_reading_list(_lib(emulator))
    version = _lib(emulator).version
    report = _synced(fresh_store, api)
    assert report.counts()["graph_created"] == 53 and emulator.request_count("POST") == 0
    rows = reading_rows(fresh_store)
    assert len(rows) == 53 and Counter(r["status"] for r in rows) == {"to-read": 45, "read": 8}
    assert all(len(r["categories"]) == 1 for r in rows)
    assert current_statuses(fresh_store)[GPIPE.value][0] == "to-read"
    assert _lib(emulator).version == version
    assert validate_store(fresh_store) == []
    _quiet(fresh_store, api, emulator)


def test_a_library_written_by_the_sync_reads_back_onto_the_same_papers(built_store, fresh_store,
                                                                      api_for: Callable[..., ZoteroAPI]) -> None:
    _synced(built_store, api_for())
    _synced(fresh_store, api_for())
    assert set(current_statuses(fresh_store)) == set(current_statuses(built_store))
    assert {k: v[0] for k, v in current_statuses(fresh_store).items()} == {
        k: v[0] for k, v in current_statuses(built_store).items()}


# -- edits ------------------------------------------------------------------------------------------


def test_a_status_changed_on_each_side_reaches_the_other(built_store, emulator: ZoteroEmulator,
                                                         api: ZoteroAPI, pyzotero_client) -> None:
    _synced(built_store, api)
    set_status(built_store, GPIPE, "reading")
    zero = pyzotero_client.item(_by_title(emulator, "ZeRO: Memory Optimizations")["key"])
    zero["data"]["extra"] = zero["data"]["extra"].replace("Read_Status: To Read", "Read_Status: Read")
    pyzotero_client.update_item(zero["data"])
    report = _synced(built_store, api)
    assert report.conflicts == []
    assert {(c.side, c.title.split(":")[0], c.fields) for c in report.changes} == {
        ("zotero", "GPipe", ("status",)), ("graph", "ZeRO", ("status",))}
    assert _status_line(_by_title(emulator, "GPipe")) == "In Progress"
    assert current_statuses(built_store)[ZERO.value][0] == "read"
    vias = {r["via"].value for r in built_store.select(  # type: ignore[union-attr]
        f"SELECT ?via WHERE {{ GRAPH {READING} {{ ?e tkg:paper ?p ; tkg:status ?s ; tkg:via ?via }} }}", {"p": ZERO})}
    assert "zotero" in vias
    _quiet(built_store, api, emulator)


@pytest.mark.parametrize(("rule", "winner"), [("newest", "zotero"), ("zotero", "zotero"), ("graph", "graph")])
def test_the_same_field_changed_on_both_sides_is_decided_and_reported(
        built_store, emulator: ZoteroEmulator, api: ZoteroAPI, rule: str, winner: str) -> None:
    _synced(built_store, api)
    set_status(built_store, GPIPE, "reading", at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    key = _by_title(emulator, "GPipe")["key"]
    _lib(emulator).update_item(key, extra="Read_Status: Skimmed twice\nRead_Status_Date: 2026-06-01T00:00:00.000Z")
    report = _synced(built_store, api, conflict=rule)
    [conflict] = report.conflicts
    assert (conflict.field, conflict.winner, conflict.rule) == ("status", winner, rule)
    expected = "Skimmed twice" if winner == "zotero" else "reading"
    lost = "reading" if winner == "zotero" else "Skimmed twice"
    graph_status = current_statuses(built_store)[GPIPE.value][0]
    assert graph_status == ("skimmed-twice" if winner == "zotero" else "reading")
    assert _status_line(_by_title(emulator, "GPipe")) == ("Skimmed twice" if winner == "zotero" else "In Progress")
    [row] = conflict_rows(built_store)
    assert row["losing_value"] == lost and row["winner"] == winner and expected in (row["graph"], row["zotero"])
    _quiet(built_store, api, emulator, conflict=rule)


def test_changes_to_different_fields_of_one_item_merge(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    _synced(built_store, api)
    set_status(built_store, GPIPE, "read")
    key = _by_title(emulator, "GPipe")["key"]
    _lib(emulator).update_item(key, title="GPipe (renamed)", tags=[{"tag": "pipeline"}])
    report = _synced(built_store, api)
    assert report.conflicts == []
    item = _lib(emulator).item(key)
    assert _status_line(item) == "Read" and item["title"] == "GPipe (renamed)"
    assert graph_edits.tags_of(built_store, GPIPE) == {"pipeline"}
    assert graph_edits.title_of(built_store, GPIPE) == {"GPipe (renamed)"}


def test_custom_statuses_survive_round_trips(fresh_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    lib = _lib(emulator)
    customs = [f"Custom status {i:03d} ✍" for i in range(300)]
    for chunk in range(0, 300, 50):
        lib.create_items([{"itemType": "journalArticle", "title": f"Paper {i}", "extra": f"Read_Status: {s}"}
                          for i, s in enumerate(customs[chunk:chunk + 50], start=chunk)])
    before = {k: d["extra"] for k, d in lib.items.items()}
    _synced(fresh_store, api)
    labels = {r["label"].value for r in fresh_store.select(  # type: ignore[union-attr]
        "SELECT ?label WHERE { ?p tkg:readingStatus ?s . ?s skos:prefLabel ?label }")}
    assert labels == set(customs)
    paper = next(NamedNode(p) for p in current_statuses(fresh_store))
    set_status(fresh_store, paper, "Custom status 999 ✍")
    graph_edits.add_tag(fresh_store, paper, "touched")
    _synced(fresh_store, api)
    _synced(fresh_store, api)
    changed = {k for k, d in lib.items.items() if d["extra"] != before[k]}
    assert len(changed) == 1
    [key] = changed
    assert _status_line(lib.item(key)) == "Custom status 999 ✍"
    assert all(_status_line(d) == _status_line({"extra": before[k]}) for k, d in lib.items.items() if k != key)


def test_a_status_from_zotero_that_is_too_long_is_refused_with_a_message(
        built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    """Statuses arriving from Zotero pass the same check as ``kg reading set --custom``."""
    _synced(built_store, api, status_format="both")
    lib = _lib(emulator)
    long_status = ("Skimmed " * 25).strip()  # 199 characters
    lib.create_items([
        {"itemType": "preprint", "title": "Long status paper", "extra": f"Read_Status: {long_status}"},
        {"itemType": "preprint", "title": "Long tag paper", "tags": [{"tag": "status/" + "x" * 61}]},
        {"itemType": "preprint", "title": "Short status paper", "extra": "Read_Status: On hold"}])
    gpipe = _by_title(emulator, "GPipe")
    lib.update_item(gpipe["key"], extra=f"Read_Status: {long_status}")
    report = sync(built_store, api, SyncOptions(status_format="both"))
    failed = dict(report.failed)
    assert set(failed) == {"Long status paper", "Long tag paper", gpipe["title"]}, report.failed
    assert all("at most 60 characters" in e and "Change it in Zotero" in e for e in failed.values())
    labels = [r["label"].value for r in built_store.select(  # type: ignore[union-attr]
        "SELECT ?label WHERE { ?s a tkg:ReadingStatus ; skos:prefLabel ?label }")]
    assert labels and max(len(label) for label in labels) <= 60
    statuses = current_statuses(built_store)
    assert statuses[GPIPE.value][0] == "to-read"  # the graph keeps what it had
    assert "on-hold" in {s for s, _at in statuses.values()}  # the rest of the sync went through
    assert _status_line(lib.item(gpipe["key"])) == long_status  # Zotero's value is not overwritten
    assert validate_store(built_store) == []
    lib.update_item(gpipe["key"], extra="Read_Status: Skimmed")
    _synced(built_store, api, status_format="both")
    assert current_statuses(built_store)[GPIPE.value][0] == "skimmed"


def test_a_note_added_in_zotero_reaches_the_graph_and_back(built_store, emulator: ZoteroEmulator, api: ZoteroAPI,
                                                           pyzotero_client) -> None:
    _synced(built_store, api)
    key = _by_title(emulator, "GPipe")["key"]
    pyzotero_client.create_items([{"itemType": "note", "note": "<p>Bubble = (p-1)/m</p>"}], parentid=key)
    report = _synced(built_store, api)
    assert [(c.side, c.fields) for c in report.changes if c.side == "graph"][0][1][0].startswith("note:")
    [(note, body)] = graph_edits.notes_of(built_store, GPIPE).items()
    assert body == "<p>Bubble = (p-1)/m</p>"
    listed = next(r for r in reading_rows(built_store) if r["paper"] == GPIPE.value)
    assert listed["has_note"] is True and listed["note"] == "Bubble = (p-1)/m"  # the note's text, without the HTML
    graph_edits.edit_note(built_store, NamedNode(note), "<p>Bubble = (p-1)/(m+p-1)</p>")
    _synced(built_store, api)
    [child] = _lib(emulator).children(key)
    assert child["note"] == "<p>Bubble = (p-1)/(m+p-1)</p>"
    ours = graph_edits.add_note(built_store, GPIPE, "<p>A second note, written in the graph</p>")
    _synced(built_store, api)
    assert sorted(c["note"] for c in _lib(emulator).children(key)) == [
        "<p>A second note, written in the graph</p>", "<p>Bubble = (p-1)/(m+p-1)</p>"]
    _lib(emulator).delete_items([child["key"]])
    _synced(built_store, api)
    assert list(graph_edits.notes_of(built_store, GPIPE)) == [ours.value]
    _quiet(built_store, api, emulator)


def test_an_item_renamed_on_either_side_is_renamed_on_the_other(built_store, emulator: ZoteroEmulator,
                                                                api: ZoteroAPI) -> None:
    _synced(built_store, api)
    key = _by_title(emulator, "GPipe")["key"]
    _lib(emulator).update_item(key, title="GPipe: giant networks, pipelined")
    _synced(built_store, api)
    assert graph_edits.title_of(built_store, GPIPE) == {"GPipe: giant networks, pipelined"}
    assert len(reading_rows(built_store)) == 53
    _quiet(built_store, api, emulator)
    graph_edits.rename_in_catalog(built_store, ZERO, "ZeRO (renamed in papers.toml)")
    _synced(built_store, api)
    assert _by_title(emulator, "ZeRO (renamed")["key"]
    assert graph_edits.title_of(built_store, ZERO) == {"ZeRO (renamed in papers.toml)"}
    _quiet(built_store, api, emulator)


# -- deletions -------------------------------------------------------------------------------------


def test_an_item_trashed_in_zotero_but_edited_in_the_graph_is_kept(built_store, emulator: ZoteroEmulator,
                                                                   api: ZoteroAPI) -> None:
    _synced(built_store, api)
    key = _by_title(emulator, "GPipe")["key"]
    _lib(emulator).trash(key)
    set_status(built_store, GPIPE, "read")
    report = _synced(built_store, api, conflict="zotero")
    assert [(c.field, c.winner, c.rule) for c in report.conflicts] == [("present", "graph", "edit-beats-delete")]
    item = _lib(emulator).item(key)
    assert "deleted" not in item and _status_line(item) == "Read"
    assert current_statuses(built_store)[GPIPE.value][0] == "read"
    _quiet(built_store, api, emulator)


def test_an_item_deleted_for_good_in_zotero_but_edited_in_the_graph_comes_back(
        built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    _synced(built_store, api)
    key = _by_title(emulator, "GPipe")["key"]
    _lib(emulator).delete_items([key])
    set_status(built_store, GPIPE, "reading")
    report = _synced(built_store, api)
    assert [c.field for c in report.conflicts] == ["present"]
    again = _by_title(emulator, "GPipe")
    assert again["key"] != key and _status_line(again) == "In Progress"
    assert len(_lib(emulator).top_items()) == 53
    _quiet(built_store, api, emulator)


def test_an_item_deleted_in_zotero_leaves_the_reading_list(built_store, emulator: ZoteroEmulator,
                                                           api: ZoteroAPI) -> None:
    _synced(built_store, api)
    gpipe, zero = _by_title(emulator, "GPipe")["key"], _by_title(emulator, "ZeRO: Memory Optimizations")["key"]
    _lib(emulator).trash(gpipe)
    _lib(emulator).delete_items([zero])
    report = _synced(built_store, api)
    assert {c.title.split(":")[0] for c in report.changes if c.action == "delete"} == {"GPipe", "ZeRO"}
    statuses = current_statuses(built_store)
    assert GPIPE.value not in statuses and ZERO.value not in statuses
    removals = built_store.select(f"SELECT ?e WHERE {{ GRAPH {READING} {{ ?e a tkg:ReadingRemoval ; tkg:paper ?p }} }}",
                                  {"p": GPIPE})
    assert len(removals) == 1
    assert built_store.count(ZOTERO) > 0 and graph_edits.title_of(built_store, GPIPE) == set()
    assert _valid(built_store) == []
    _quiet(built_store, api, emulator)
    assert len(_lib(emulator).top_items()) == 51
    _lib(emulator).restore(gpipe)
    _synced(built_store, api)
    assert current_statuses(built_store)[GPIPE.value][0] == "to-read"


# -- options -----------------------------------------------------------------------------------------


def test_statuses_as_tags_or_both(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    _synced(built_store, api, status_format="tags")
    gpipe = _by_title(emulator, "GPipe")
    assert {"tag": "status/to-read"} in gpipe["tags"] and _status_line(gpipe) is None
    _lib(emulator).update_item(gpipe["key"], tags=[{"tag": "status/read"}, {"tag": "pipeline"}])
    _synced(built_store, api, status_format="tags")
    assert current_statuses(built_store)[GPIPE.value][0] == "read"
    assert graph_edits.tags_of(built_store, GPIPE) == {"pipeline"}
    set_status(built_store, GPIPE, "Skimmed twice")
    _synced(built_store, api, status_format="both")
    item = _lib(emulator).item(gpipe["key"])
    assert {"tag": "status/Skimmed twice"} in item["tags"] and _status_line(item) == "Skimmed twice"
    assert {"tag": "pipeline"} in item["tags"]
    _quiet(built_store, api, emulator, status_format="both")


def test_collections_map_to_categories_by_name(fresh_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    lib = _lib(emulator)
    moe = lib.create_collection("MoE papers")
    lib.create_items([{"itemType": "preprint", "title": "GShard", "url": "https://arxiv.org/abs/2006.16668",
                       "collections": [moe], "extra": "Read_Status: To Read"}])
    mapping = {"MoE papers": "LLM Training / Mixture-of-Experts Training"}
    _synced(fresh_store, api, collections=mapping)
    [row] = reading_rows(fresh_store)
    assert row["categories"] == ["LLM Training / Mixture-of-Experts Training"]
    paper = NamedNode(row["paper"])
    set_status(fresh_store, paper, "read")
    graph_edits.add_tag(fresh_store, paper, "moe")
    _synced(fresh_store, api, collections=mapping)
    assert {c["name"] for c in lib.collections.values()} == {"MoE papers"}
    _quiet(fresh_store, api, emulator, collections=mapping)


def test_a_dry_run_plans_and_writes_nothing(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    before = sorted(str(q) for q in built_store.triples())
    report = sync(built_store, api, SyncOptions(dry_run=True))
    assert report.dry_run and report.counts()["zotero_created"] == 53
    assert {c.what for c in report.changes} == {"item", "collection"}
    assert emulator.request_count("POST") == 0 and _lib(emulator).version == 0
    assert sorted(str(q) for q in built_store.triples()) == before
    _synced(built_store, api)
    set_status(built_store, GPIPE, "read")
    _lib(emulator).update_item(_by_title(emulator, "GPipe")["key"], extra="Read_Status: Not Reading")
    plan = sync(built_store, api, SyncOptions(dry_run=True))
    assert [c.field for c in plan.conflicts] == ["status"]
    assert current_statuses(built_store)[GPIPE.value][0] == "read"
