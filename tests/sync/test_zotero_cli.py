"""``kg sync zotero`` and ``kg ingest zotero`` from the real console script, against the
emulator; and the API key, planted, never reaches the graph, logs, caches or exports."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from ingest.emulators.zotero import ZoteroEmulator
from ingest.zotero import LibrarySpec, connect
from ingest.zotero_sync import sync
from tests.sync.conftest import FAST, GROUP_ID, KEY, USER_ID

LIBRARY = f"user:{USER_ID}"


def _env(emulator: ZoteroEmulator, key: str | None = KEY) -> dict[str, str]:
    env = {"ZOTERO_API_URL": emulator.url, "ZOTERO_LIBRARY": LIBRARY}
    if key:
        env["ZOTERO_API_KEY"] = key
    return env


def test_sync_from_the_command_line(kg_cli, built_store_path: Path, emulator: ZoteroEmulator) -> None:
    out = kg_cli("sync", "zotero", "--format", "json", store=built_store_path, env=_env(emulator), check=True)
    report = json.loads(out.stdout)
    assert report["zotero_created"] == 53 and report["library"] == LIBRARY and report["graph_written"]
    assert len(emulator.library("user", USER_ID).top_items()) == 53
    again = kg_cli("sync", "zotero", store=built_store_path, env=_env(emulator), check=True)
    assert "nothing to change on either side" in again.stdout and "1 requests" in again.stdout


def test_a_dry_run_prints_the_plan_and_writes_nothing(kg_cli, built_store_path: Path,
                                                      emulator: ZoteroEmulator) -> None:
    out = kg_cli("sync", "zotero", "--dry-run", store=built_store_path, env=_env(emulator), check=True)
    assert "dry run: nothing was written" in out.stdout and "Changes that would be made" in out.stdout
    assert "GPipe" in out.stdout and "collection" in out.stdout
    assert emulator.library("user", USER_ID).version == 0
    rows = kg_cli("sync", "zotero", "--dry-run", "--format", "csv", store=built_store_path, env=_env(emulator),
                  check=True).stdout.splitlines()
    assert rows[0] == "side,action,what,title,key,fields" and len(rows) == 1 + 53 + 9


def test_ingest_zotero_reads_without_writing(kg_cli, built_store_path: Path, emulator: ZoteroEmulator) -> None:
    lib = emulator.library("user", USER_ID)
    lib.create_items([{"itemType": "preprint", "title": "Gated Delta Networks", "url": "https://arxiv.org/abs/2412.06464",
                       "extra": "Read_Status: Read"}])
    out = kg_cli("ingest", "zotero", "--format", "json", store=built_store_path, env=_env(emulator), check=True)
    report = json.loads(out.stdout)
    assert report["direction"] == "pull" and report["graph_updated"] == 1 and report["zotero_created"] == 0
    assert emulator.request_count("POST") == 0
    listing = kg_cli("reading", "list", "--status", "read", "-f", "json", store=built_store_path, check=True)
    assert "Gated Delta Networks: Improving Mamba2 with Delta Rule" in listing.stdout


def test_conflicts_are_listed_with_the_losing_value(kg_cli, built_store_path: Path, emulator: ZoteroEmulator) -> None:
    kg_cli("sync", "zotero", store=built_store_path, env=_env(emulator), check=True)
    kg_cli("reading", "set", "GPipe", "reading", store=built_store_path, check=True)
    lib = emulator.library("user", USER_ID)
    [key] = [k for k, d in lib.items.items() if d["title"].startswith("GPipe")]
    lib.update_item(key, extra="Read_Status: Skimmed twice\nRead_Status_Date: 2099-01-01T00:00:00.000Z")
    out = kg_cli("sync", "zotero", "--conflict", "graph", store=built_store_path, env=_env(emulator), check=True)
    assert "Conflicts (the losing values are kept)" in out.stdout and "Skimmed twice" in out.stdout
    rows = json.loads(kg_cli("sync", "zotero", "conflicts", "-f", "json", store=built_store_path, check=True).stdout)
    assert [(r["field"], r["kept"], r["losing_value"]) for r in rows] == [("status", "graph", "Skimmed twice")]


@pytest.mark.parametrize(("args", "env_key", "message", "hint"), [
    ((), None, "no Zotero API key for user:", "keyring set techkg-zotero"),
    (("--library", "me"), KEY, "does not name a Zotero library", "--library user:<userID>"),
    (("--map", "no equals sign"), KEY, "is not 'Zotero name=Category'", "--map"),
    (("--library", f"group:{GROUP_ID + 1}"), KEY, "Zotero", "--library"),
])
def test_bad_input_gets_a_clear_error(kg_cli, built_store_path: Path, emulator: ZoteroEmulator,
                                      args: tuple[str, ...], env_key: str | None, message: str, hint: str) -> None:
    out = kg_cli("sync", "zotero", *args, store=built_store_path, env=_env(emulator, env_key))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert message in out.stderr and hint in out.stderr


def test_a_planted_key_never_reaches_the_graph_logs_caches_or_exports(
        kg_cli, built_store_path: Path, emulator: ZoteroEmulator, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    planted = "PLANTEDzotero0KEY9f8e7d6c"
    emulator.add_key(planted, user_id=USER_ID, libraries=[LIBRARY])
    env = {**_env(emulator, planted), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    outputs = [
        kg_cli("sync", "zotero", store=built_store_path, env=env, check=True),
        kg_cli("ingest", "zotero", "--format", "json", store=built_store_path, env=env, check=True),
        kg_cli("sync", "zotero", "--library", f"group:{GROUP_ID}", store=built_store_path, env=env),
        kg_cli("sync", "zotero", "--api-url", "http://127.0.0.1:9", "--timeout", "1", store=built_store_path, env=env),
        kg_cli("export", "rdf", "--include-private", "-f", "nquads", "-o", str(tmp_path / "all.nq"),
               store=built_store_path, check=True),
        kg_cli("export", "bibtex", "--include-private", "-o", str(tmp_path / "list.bib"),
               store=built_store_path, check=True),
    ]
    assert outputs[2].returncode == 1 and "refused access" in outputs[2].stderr
    assert outputs[3].returncode == 1 and "could not be reached" in outputs[3].stderr
    for run in outputs:
        assert planted not in run.stdout + run.stderr
    files = [p for root in (built_store_path, tmp_path) for p in root.rglob("*") if p.is_file()]
    assert any(p.name == "all.nq" for p in files)
    for path in files:
        assert planted.encode() not in path.read_bytes(), path
    # and in-process, with every logger at DEBUG
    caplog.set_level(logging.DEBUG)
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(tmp_path / "second")
    api = connect(LibrarySpec.parse(LIBRARY), key=planted, api_url=emulator.url, retry=FAST)
    report = sync(store, api)
    api.close()
    store.close()
    assert planted not in caplog.text and planted not in json.dumps(report.as_dict())
    assert planted not in repr(emulator.requests)
    assert os.environ.get("ZOTERO_API_KEY") is None


def test_kg_ingest_zotero_links_the_papers_by_their_tags_and_notes(kg_cli, built_store_path: Path,
                                                                  emulator: ZoteroEmulator) -> None:
    lib = emulator.library("user", USER_ID)
    lib.create_items([{"itemType": "preprint", "title": "Serving notes on a small cluster",
                       "url": "https://example.org/serving-notes", "tags": [{"tag": "PagedAttention"}],
                       "extra": "Read_Status: To Read"}])
    out = kg_cli("ingest", "zotero", store=built_store_path, env=_env(emulator), check=True)
    assert "linked" in out.stderr
    rows = json.loads(kg_cli("links", "PagedAttention", "-f", "json", store=built_store_path, check=True).stdout)
    tagged = [r for r in rows if r["title"] == "Serving notes on a small cluster"]
    assert tagged and tagged[0]["relation"] == "uses"
    assert {"field": "zotero-tag", "text": "PagedAttention", "source": "zotero"} in tagged[0]["evidence"]
