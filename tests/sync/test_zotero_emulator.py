"""The Zotero API emulator, driven by the real pyzotero client: its answers have the
shapes of the recorded real ones in ../shared/fixtures/zotero, and it keeps versions,
``since``, ``/deleted``, write tokens, preconditions, limits and rate limits as the API
does."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from pyzotero import errors as ze

from ingest.emulators.zotero import ZoteroEmulator
from tests.conftest import FIXTURES
from tests.sync.conftest import KEY, USER_ID

ZOTERO_FIXTURES = FIXTURES / "zotero"


def _fixture(name: str) -> Any:
    return json.loads((ZOTERO_FIXTURES / name).read_text(encoding="utf-8"))


def _seed_public_library(emulator: ZoteroEmulator) -> list[dict[str, Any]]:
    """The recorded public library's items and collections, loaded into the emulator."""
    items = _fixture("pyzotero/items_doc.json")
    lib = emulator.library("user", USER_ID)
    collections = sorted({c for item in items for c in item["data"]["collections"]})
    for key in collections:
        lib.create_collection(f"collection {key}", key=key)
    lib.create_items([{k: v for k, v in item["data"].items() if k not in ("version", "dateAdded", "dateModified")}
                      for item in items])
    return items


def _http(emulator: ZoteroEmulator, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Zotero-API-Version": "3", "Authorization": f"Bearer {KEY}", **kwargs.pop("headers", {})}
    with httpx.Client(base_url=emulator.url, timeout=10) as client:
        return client.request(method, path, headers=headers, **kwargs)


# -- shapes of the answers ------------------------------------------------------------------


def test_items_have_the_shape_of_the_recorded_public_library(emulator: ZoteroEmulator, pyzotero_client) -> None:
    recorded = {item["key"]: item for item in _seed_public_library(emulator)}
    served = pyzotero_client.everything(pyzotero_client.top(limit=7))
    assert {item["key"] for item in served} == set(recorded)
    for item in served:
        real = recorded[item["key"]]
        assert set(item) == set(real)
        assert set(item["library"]) == set(real["library"]) and item["library"]["type"] == "user"
        assert {"self", "alternate"} <= set(item["links"]) and item["links"]["self"]["type"] == "application/json"
        assert set(item["data"]) == set(real["data"]), item["key"]
        for name, value in real["data"].items():
            if name not in ("version", "dateAdded", "dateModified"):
                assert item["data"][name] == value, (item["key"], name)
        assert set(item["meta"]) <= {"creatorSummary", "parsedDate", "numChildren"}
        assert item["meta"].get("creatorSummary") == real["meta"].get("creatorSummary"), item["key"]
        parsed = real["meta"].get("parsedDate")
        if parsed and "-00" not in parsed:  # the recording predates Zotero's unpadded parsedDate
            assert item["meta"]["parsedDate"] == parsed


def test_the_newer_recording_matches_exactly_in_structure(emulator: ZoteroEmulator, pyzotero_client) -> None:
    real = _fixture("zotero-api-client/single-object-get-response.json")
    lib = emulator.library("user", USER_ID)
    lib.create_items([{k: v for k, v in real["data"].items()
                       if k not in ("version", "dateAdded", "dateModified", "collections")}])
    key = next(iter(lib.items))
    item = pyzotero_client.item(key)
    assert set(item) == set(real) and set(item["meta"]) == set(real["meta"])
    assert item["meta"]["creatorSummary"] == real["meta"]["creatorSummary"]
    assert item["meta"]["parsedDate"] == real["meta"]["parsedDate"]


def test_collections_and_tags_have_the_recorded_shapes(emulator: ZoteroEmulator, pyzotero_client) -> None:
    lib = emulator.library("user", USER_ID)
    parent = lib.create_collection("Sherlock")
    child = lib.create_collection("LoC", parent)
    lib.create_items([{"itemType": "book", "title": "A Study in Scarlet", "collections": [child],
                       "tags": [{"tag": "Community / Economic Development", "type": 1}]}])
    real_list = _fixture("pyzotero/collections_doc.json")
    real_child = _fixture("pyzotero/collection_doc.json")
    served = pyzotero_client.collections()
    assert all(set(c) == set(real_list[0]) for c in served)
    top = next(c for c in served if c["key"] == parent)
    assert top["data"]["parentCollection"] is False and set(top["data"]) == set(real_list[0]["data"])
    sub = pyzotero_client.collection(child)
    assert set(sub["links"]) == set(real_child["links"]) and sub["data"]["parentCollection"] == parent
    assert sub["meta"] == {"numCollections": 0, "numItems": 1}
    tags = _http(emulator, "GET", f"/users/{USER_ID}/tags").json()
    real_tags = _fixture("pyzotero/tags_doc.json")
    assert set(tags[0]) == set(real_tags[0]) and set(tags[0]["meta"]) == set(real_tags[0]["meta"])
    assert tags[0]["meta"] == {"type": 1, "numItems": 1}
    assert pyzotero_client.tags() == ["Community / Economic Development"]


def test_multi_object_write_answers_per_index(emulator: ZoteroEmulator, pyzotero_client) -> None:
    recorded = _fixture("zotero-api-client/multi-mixed-write-response.json")
    lib = emulator.library("user", USER_ID)
    [existing] = lib.create_items([{"itemType": "book", "title": "Same"}])
    answer = _http(emulator, "POST", f"/users/{USER_ID}/items",
                   headers={"If-Unmodified-Since-Version": str(lib.version)},
                   json=[{"itemType": "book", "title": "New"}, {"itemType": "book", "nonsense": "x"},
                         {"key": existing, "title": "Same"}])
    assert answer.status_code == 200
    body = answer.json()
    assert set(recorded) <= set(body) and "successful" in body
    assert list(body["success"]) == ["0"] and body["unchanged"] == {"2": existing}
    assert body["failed"]["1"]["code"] == 400 and "'nonsense' is not a valid field" in body["failed"]["1"]["message"]
    assert set(body["failed"]["1"]) == set(next(iter(recorded["failed"].values())))
    assert body["successful"]["0"]["data"]["title"] == "New"
    assert int(answer.headers["Last-Modified-Version"]) == lib.version == body["successful"]["0"]["version"]


# -- versions, since, deletions -----------------------------------------------------------------


def test_versions_since_and_deleted(emulator: ZoteroEmulator, pyzotero_client) -> None:
    lib = emulator.library("user", USER_ID)
    a, b = lib.create_items([{"itemType": "book", "title": "A"}, {"itemType": "book", "title": "B"}])
    v1 = lib.version
    lib.update_item(a, title="A2")
    assert pyzotero_client.item_versions(since=v1) == {a: lib.version}
    assert int(pyzotero_client.request.headers["Last-Modified-Version"]) == lib.version
    assert pyzotero_client.last_modified_version() == lib.version
    lib.delete_items([b])
    assert pyzotero_client.deleted(since=v1)["items"] == [b]
    assert pyzotero_client.deleted(since=lib.version)["items"] == []
    missing = _http(emulator, "GET", f"/users/{USER_ID}/deleted")
    assert missing.status_code == 400 and "since" in missing.text and "Last-Modified-Version" not in missing.headers


def test_total_results_and_paging(emulator: ZoteroEmulator, pyzotero_client) -> None:
    lib = emulator.library("user", USER_ID)
    lib.create_items([{"itemType": "book", "title": f"Book {i}"} for i in range(7)])
    first = pyzotero_client.items(limit=3)
    assert len(first) == 3 and pyzotero_client.request.headers["Total-Results"] == "7"
    assert len(pyzotero_client.everything(pyzotero_client.items(limit=3))) == 7
    assert pyzotero_client.count_items() == 7


def test_conditional_reads_answer_304_only_for_lists(emulator: ZoteroEmulator) -> None:
    lib = emulator.library("user", USER_ID)
    [key] = lib.create_items([{"itemType": "book", "title": "A"}])
    same = {"If-Modified-Since-Version": str(lib.version)}
    assert _http(emulator, "GET", f"/users/{USER_ID}/items", headers=same).status_code == 304
    assert _http(emulator, "GET", f"/users/{USER_ID}/items/{key}", headers=same).status_code == 200
    older = {"If-Modified-Since-Version": str(lib.version - 1)}
    assert _http(emulator, "GET", f"/users/{USER_ID}/items", headers=older).status_code == 200


def test_trashed_items_are_hidden_unless_asked_for(emulator: ZoteroEmulator, pyzotero_client) -> None:
    lib = emulator.library("user", USER_ID)
    kept, binned = lib.create_items([{"itemType": "book", "title": "Kept"}, {"itemType": "book", "title": "Binned"}])
    lib.trash(binned)
    assert [i["key"] for i in pyzotero_client.items()] == [kept]
    assert {i["key"] for i in pyzotero_client.items(includeTrashed=1)} == {kept, binned}
    assert [i["key"] for i in pyzotero_client.trash()] == [binned]
    assert pyzotero_client.item(binned)["data"]["deleted"] == 1


# -- writes and their preconditions ------------------------------------------------------------------


def test_write_tokens_cannot_be_used_twice(emulator: ZoteroEmulator) -> None:
    lib = emulator.library("user", USER_ID)
    headers = {"Zotero-Write-Token": "a" * 32}
    body = [{"itemType": "book", "title": "Once"}]
    assert _http(emulator, "POST", f"/users/{USER_ID}/items", headers=headers, json=body).status_code == 200
    again = _http(emulator, "POST", f"/users/{USER_ID}/items", headers=headers, json=body)
    assert again.status_code == 412 and again.text == "Write token already used"
    assert len(lib.items) == 1
    short = _http(emulator, "POST", f"/users/{USER_ID}/items", headers={"Zotero-Write-Token": "abc"}, json=body)
    assert short.status_code == 400


def test_stale_versions_get_412_and_missing_ones_428(emulator: ZoteroEmulator, pyzotero_client) -> None:
    lib = emulator.library("user", USER_ID)
    [key] = lib.create_items([{"itemType": "book", "title": "A"}])
    stale = lib.version
    lib.update_item(key, title="B")
    answer = _http(emulator, "POST", f"/users/{USER_ID}/items", headers={"If-Unmodified-Since-Version": str(stale)},
                   json=[{"key": key, "title": "C"}])
    assert answer.status_code == 412
    assert answer.text == f"Library has been modified since specified version (expected {stale}, found {lib.version})"
    assert "Last-Modified-Version" not in answer.headers
    item = pyzotero_client.item(key)
    item["data"]["version"] = stale
    with pytest.raises(ze.PreConditionFailedError):
        pyzotero_client.update_item(item["data"])
    unkeyed = _http(emulator, "POST", f"/users/{USER_ID}/items", json=[{"key": key, "title": "D"}])
    assert unkeyed.json()["failed"]["0"]["code"] == 428
    assert _http(emulator, "DELETE", f"/users/{USER_ID}/items", params={"itemKey": key}).status_code == 428
    assert lib.item(key)["title"] == "B"
    mismatch = _http(emulator, "PATCH", f"/users/{USER_ID}/items/{key}",
                     headers={"If-Unmodified-Since-Version": str(lib.version)}, json={"version": stale, "title": "E"})
    assert mismatch.status_code == 400


def test_version_zero_means_must_not_exist(emulator: ZoteroEmulator) -> None:
    lib = emulator.library("user", USER_ID)
    [key] = lib.create_items([{"itemType": "book", "title": "A"}])
    answer = _http(emulator, "POST", f"/users/{USER_ID}/items", json=[{"key": key, "version": 0, "title": "B"}])
    assert answer.json()["failed"]["0"]["code"] == 412
    created = _http(emulator, "PUT", f"/users/{USER_ID}/items/ABCDEFGH",
                    headers={"If-Unmodified-Since-Version": "0"}, json={"itemType": "book", "title": "New"})
    assert created.status_code == 204 and lib.item("ABCDEFGH")["title"] == "New"


def test_more_than_fifty_objects_get_413(emulator: ZoteroEmulator, pyzotero_client) -> None:
    body = [{"itemType": "book", "title": f"B{i}"} for i in range(51)]
    answer = _http(emulator, "POST", f"/users/{USER_ID}/items", json=body)
    assert answer.status_code == 413 and "50" in answer.text
    assert emulator.library("user", USER_ID).items == {}


def test_writes_need_a_key_with_write_access(emulator: ZoteroEmulator) -> None:
    emulator.add_key("READONLYKEY", user_id=USER_ID, write=False)
    body = [{"itemType": "book", "title": "A"}]
    assert _http(emulator, "POST", f"/users/{USER_ID}/items", json=body,
                 headers={"Authorization": "Bearer READONLYKEY"}).status_code == 403
    with httpx.Client(base_url=emulator.url) as client:
        assert client.get(f"/users/{USER_ID}/items").status_code == 403
    assert all(not r.authorized for r in emulator.requests[-1:])
    assert "READONLYKEY" not in repr(emulator.requests)


def test_child_notes_and_the_schema_endpoints(emulator: ZoteroEmulator, pyzotero_client) -> None:
    created = pyzotero_client.create_items([{"itemType": "preprint", "title": "Gated Delta Networks",
                                             "archiveID": "arXiv:2412.06464"}])
    parent = created["success"]["0"]
    note = pyzotero_client.create_items([{"itemType": "note", "note": "<p>Read §3</p>"}], parentid=parent)
    assert note["successful"]["0"]["links"]["up"]["href"].endswith(parent)
    assert pyzotero_client.item(parent)["meta"]["numChildren"] == 1
    assert [c["data"]["note"] for c in pyzotero_client.children(parent)] == ["<p>Read §3</p>"]
    template = pyzotero_client.item_template("preprint")
    assert template["itemType"] == "preprint" and "archiveID" in template
    assert {"field": "DOI", "localized": "DOI"} in pyzotero_client.item_fields()
    bad = pyzotero_client.create_items([{"itemType": "note", "note": "x", "parentItem": "ZZZZZZZZ"}])
    assert bad["failed"]["0"]["code"] == 409


# -- faults --------------------------------------------------------------------------------------


def test_a_429_storm_is_waited_out_by_pyzotero(emulator: ZoteroEmulator, pyzotero_client) -> None:
    emulator.faults.rate_limit(2, retry_after=0.2, on="read")
    started = time.monotonic()
    assert pyzotero_client.items() == []
    assert time.monotonic() - started >= 0.35
    assert [r.status for r in emulator.requests] == [429, 429, 200]


def test_backoff_holds_the_next_request(emulator: ZoteroEmulator, pyzotero_client) -> None:
    emulator.faults.backoff(0.3)
    pyzotero_client.items()
    pyzotero_client.items()
    first, second = emulator.requests
    assert second.at - first.at >= 0.29


def test_a_racing_writer_makes_the_next_write_fail_its_precondition(emulator: ZoteroEmulator) -> None:
    lib = emulator.library("user", USER_ID)
    [key] = lib.create_items([{"itemType": "book", "title": "A"}])
    seen = lib.version
    emulator.faults.race(lambda emu: emu.library("user", USER_ID).update_item(key, title="theirs"))
    answer = _http(emulator, "POST", f"/users/{USER_ID}/items", headers={"If-Unmodified-Since-Version": str(seen)},
                   json=[{"key": key, "title": "ours"}])
    assert answer.status_code == 412 and lib.item(key)["title"] == "theirs"


def test_a_dropped_connection_after_the_write_leaves_the_write_done(emulator: ZoteroEmulator) -> None:
    lib = emulator.library("user", USER_ID)
    emulator.faults.drop(after_apply=True)
    with pytest.raises(httpx.RemoteProtocolError):
        _http(emulator, "POST", f"/users/{USER_ID}/items", headers={"Zotero-Write-Token": "b" * 32},
              json=[{"itemType": "book", "title": "Sent"}])
    assert [i["title"] for i in lib.items.values()] == ["Sent"]
    again = _http(emulator, "POST", f"/users/{USER_ID}/items", headers={"Zotero-Write-Token": "b" * 32},
                  json=[{"itemType": "book", "title": "Sent"}])
    assert again.status_code == 412 and len(lib.items) == 1
    emulator.faults.drop(after_apply=False)
    with pytest.raises(httpx.RemoteProtocolError):
        _http(emulator, "POST", f"/users/{USER_ID}/items", json=[{"itemType": "book", "title": "Lost"}])
    assert len(lib.items) == 1


def test_group_libraries_have_their_own_versions(emulator: ZoteroEmulator) -> None:
    from pyzotero import zotero

    group = zotero.Zotero(169947, "group", KEY)
    group.endpoint = emulator.url
    group.create_items([{"itemType": "book", "title": "Shared"}])
    group.create_items([{"itemType": "book", "title": "Shared 2"}])
    assert group.last_modified_version() == 2
    assert emulator.library("user", USER_ID).version == 0
