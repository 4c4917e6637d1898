"""The sync under the faults the real API produces: 429 storms, Backoff, racing writers
(412), 428, 413, dropped connections in the middle of a batch, and a server that is
gone. Nothing is lost, nothing is duplicated, and a failed sync leaves the graph as it
was."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from pyoxigraph import NamedNode

from ingest.emulators.zotero import ZoteroEmulator
from ingest.zotero import LibrarySpec, ZoteroAPI, connect
from ingest.zotero_sync import SyncOptions, sync
from kg.errors import IngestError, SyncError
from kg.reading import current_statuses, set_status
from tests.sync import graph_edits
from tests.sync.conftest import FAST, KEY, USER_ID

GPIPE = NamedNode("https://arxiv.org/abs/1811.06965")
ZERO = NamedNode("https://arxiv.org/abs/1910.02054")


def _lib(emulator: ZoteroEmulator):
    return emulator.library("user", USER_ID)


def _key(emulator: ZoteroEmulator, fragment: str) -> str:
    [key] = [k for k, d in _lib(emulator).items.items() if fragment in d.get("title", "")]
    return key


def _snapshot(store) -> list[str]:
    return sorted(str(q) for q in store.triples())


def _no_duplicates(emulator: ZoteroEmulator) -> None:
    items = _lib(emulator).top_items()
    assert len(items) == 53
    identities = Counter(i.get("archiveID") or i["extra"].split("\n")[0] + i["title"] for i in items)
    assert max(identities.values()) == 1


def test_a_429_storm_is_waited_out(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    emulator.faults.rate_limit(5, retry_after=0.05, on="write")
    emulator.faults.rate_limit(3, retry_after=0.05, on="read", skip=1)
    report = sync(built_store, api)
    assert not report.failed and report.retries >= 5
    assert Counter(r.status for r in emulator.requests)[429] == 8
    _no_duplicates(emulator)


def test_a_storm_longer_than_the_patience_fails_cleanly(built_store, emulator: ZoteroEmulator,
                                                       api: ZoteroAPI) -> None:
    before = _snapshot(built_store)
    emulator.faults.rate_limit(50, retry_after=0.01, on="write")
    with pytest.raises(IngestError) as error:
        sync(built_store, api)
    assert "429" in str(error.value) and "again" in error.value.hint
    assert _snapshot(built_store) == before


def test_backoff_holds_the_next_request(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    emulator.faults.backoff(0.3, on="read")
    sync(built_store, api)
    first, second = emulator.requests[:2]
    assert second.at - first.at >= 0.29


def test_a_racing_writer_is_merged_not_overwritten(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    sync(built_store, api)
    gpipe, zero = _key(emulator, "GPipe"), _key(emulator, "ZeRO: Memory")
    set_status(built_store, GPIPE, "reading")

    def racer(emu: ZoteroEmulator) -> None:
        lib = emu.library("user", USER_ID)
        lib.update_item(gpipe, title="GPipe, edited on a phone")
        lib.update_item(zero, extra="Read_Status: Read")

    emulator.faults.race(racer, on="write")
    emulator.requests.clear()
    report = sync(built_store, api)
    assert report.recoveries == 1 and report.conflicts == []
    assert Counter(r.status for r in emulator.requests if r.method == "POST") == {412: 1, 200: 1}
    item = _lib(emulator).item(gpipe)
    assert item["title"] == "GPipe, edited on a phone" and "Read_Status: In Progress" in item["extra"]
    assert current_statuses(built_store)[ZERO.value][0] == "read"
    assert graph_edits.title_of(built_store, GPIPE) == {"GPipe, edited on a phone"}


def test_a_racing_writer_on_the_same_field_is_a_conflict(built_store, emulator: ZoteroEmulator,
                                                         api: ZoteroAPI) -> None:
    sync(built_store, api)
    gpipe = _key(emulator, "GPipe")
    set_status(built_store, GPIPE, "reading")
    emulator.faults.race(lambda emu: emu.library("user", USER_ID).update_item(
        gpipe, extra="Read_Status: Not Reading\nRead_Status_Date: 2099-01-01T00:00:00.000Z"), on="write")
    report = sync(built_store, api)
    [conflict] = report.conflicts
    assert (conflict.field, conflict.winner, conflict.losing_value) == ("status", "zotero", "reading")
    assert current_statuses(built_store)[GPIPE.value][0] == "skipped"


def test_a_dropped_connection_mid_batch_creates_no_duplicates(built_store, emulator: ZoteroEmulator,
                                                              api: ZoteroAPI) -> None:
    emulator.faults.drop(after_apply=True, on="write", path="/items$", skip=1)
    report = sync(built_store, api)
    assert report.recoveries == 1 and not report.failed
    posts = [r for r in emulator.requests if r.method == "POST" and r.path.endswith("/items")]
    assert [(r.objects, r.status, r.dropped) for r in posts] == [(50, 200, False), (3, 0, True), (3, 412, False)]
    assert posts[1].write_token == posts[2].write_token
    _no_duplicates(emulator)
    emulator.requests.clear()
    assert sync(built_store, api).changes == [] and len(emulator.requests) == 1


def test_a_sync_cut_off_midway_leaves_the_graph_and_resumes_without_duplicates(
        built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    before = _snapshot(built_store)
    emulator.faults.drop(after_apply=True, on="write", path="/items$", skip=1, times=20)
    with pytest.raises(IngestError) as error:
        sync(built_store, api)
    assert "resumes where it stopped" in error.value.hint
    assert _snapshot(built_store) == before
    assert len(_lib(emulator).top_items()) == 53
    emulator.faults.clear()
    report = sync(built_store, api)
    assert report.counts()["zotero_created"] == 0 and not report.duplicates
    _no_duplicates(emulator)
    assert len(current_statuses(built_store)) == 53


def test_too_large_writes_are_split(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    emulator.max_write_objects = 10
    report = sync(built_store, api)
    assert not report.failed
    posts = [r for r in emulator.requests if r.method == "POST"]
    assert Counter(r.status for r in posts)[413] == 3  # 50, then 25, then 12 objects
    assert max(r.objects for r in posts if r.status == 200) <= 10
    _no_duplicates(emulator)


def test_428_is_answered_by_reading_again(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    sync(built_store, api)
    set_status(built_store, GPIPE, "read")
    emulator.faults.answer(428, "If-Unmodified-Since-Version not provided", on="write")
    report = sync(built_store, api)
    assert report.recoveries == 1
    assert "Read_Status: Read" in _lib(emulator).item(_key(emulator, "GPipe"))["extra"]


def test_a_writer_that_never_stops_gives_a_clear_error(built_store, emulator: ZoteroEmulator,
                                                       api: ZoteroAPI) -> None:
    sync(built_store, api)
    gpipe = _key(emulator, "GPipe")
    set_status(built_store, GPIPE, "read")
    before = _snapshot(built_store)
    counter = iter(range(1000))
    emulator.faults.race(lambda emu: emu.library("user", USER_ID).update_item(
        gpipe, tags=[{"tag": f"t{next(counter)}"}]), on="write", times=100)
    with pytest.raises(SyncError) as error:
        sync(built_store, api, SyncOptions(max_attempts=3))
    assert "kept refusing" in str(error.value) and "later" in error.value.hint
    assert _snapshot(built_store) == before


def test_an_unreachable_server_gives_a_clear_error(built_store, emulator: ZoteroEmulator) -> None:
    url = emulator.url
    emulator.stop()
    before = _snapshot(built_store)
    api = connect(LibrarySpec("user", USER_ID), key=KEY, api_url=url, retry=FAST)
    with pytest.raises(IngestError) as error:
        sync(built_store, api)
    assert "could not be reached" in str(error.value) and "--api-url" in error.value.hint
    assert _snapshot(built_store) == before


def test_a_wrong_key_is_refused_with_a_hint(built_store, emulator: ZoteroEmulator,
                                            api_for: Callable[..., ZoteroAPI]) -> None:
    with pytest.raises(IngestError) as error:
        sync(built_store, api_for(key="WRONGKEY12345"))
    assert "refused access" in str(error.value) and "ZOTERO_API_KEY" in error.value.hint
    assert "WRONGKEY12345" not in str(error.value) + error.value.hint
