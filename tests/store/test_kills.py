"""Crash safety: a ``kg`` process killed with SIGKILL at any moment of a write leaves the
store fully old or fully new, and the next command says that it is recovering and what.

Each case runs the real command to a named pause point (``kg.pauses``) and kills it there;
a few more kill it after a delay, wherever it happens to be."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.graphs import LINKS, PROVENANCE, READING, USER_GRAPHS
from kg.store.base import content_hash
from kg.store.embedded import OxigraphStore
from tests.store.lists import my_list
from tests.store.processes import kill_at, start_kg


def _digest(store: OxigraphStore, graph: ox.NamedNode) -> str:
    """A graph's content hash; for the reading state, of what does not depend on when the
    run happened (events have fresh IRIs and times): each paper's status, and how many
    events and removals there are."""
    if graph != READING:
        return content_hash(store.triples(graph))
    statuses = sorted(f"{r['p']} {r['s']}" for r in store.select(
        f"SELECT ?p ?s WHERE {{ GRAPH {READING} {{ ?p tkg:readingStatus ?s }} }}").records())
    events = store.select(f"SELECT (COUNT(?e) AS ?n) WHERE {{ GRAPH {READING} {{ ?e tkg:paper ?p }} }}").rows
    return f"{hash(tuple(statuses))}:{events[0]['n']}"


def fingerprint(store_path: Path) -> dict[str, str]:
    """Each graph's content, provenance left out (its run records differ run to run), and
    so is the derived ``links`` graph: a command links what it changed in a transaction of
    its own after its write, so a kill between the two leaves the links as they were until
    the next ``kg link`` (tests/linking/test_link_kills.py kills ``kg link`` itself)."""
    with OxigraphStore.open_reader(store_path) as store:
        return {g.value: _digest(store, g) for g in store.named_graphs() if g not in (PROVENANCE, LINKS)}


def user_fingerprint(store_path: Path) -> dict[str, str]:
    with OxigraphStore.open_reader(store_path) as store:
        return {g.value: _digest(store, g) for g in USER_GRAPHS}


@pytest.fixture
def two_stores(built_store_path: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The built store, and a copy of it to run the command on uninterrupted."""
    other = tmp_path / "uninterrupted"
    shutil.copytree(built_store_path, other)
    return built_store_path, other


def _case(kg_cli, stores: tuple[Path, Path], point: str, *args: str, next_says: str) -> tuple[dict, dict, dict]:
    """Kill ``kg ARGS`` at ``point`` on one store; run it whole on the other; return the
    fingerprints (old, new, after the kill and the next command)."""
    victim, whole = stores
    old = fingerprint(victim)
    kg_cli(*args, store=whole, check=True)
    new = fingerprint(whole)
    kill_at(point, *args, store=victim)
    after_kill = kg_cli("--wait", "0", "reading", "set", "Switch Transformers", "skipped", store=victim,
                        check=True)
    assert "recovering" in after_kill.stderr and next_says in " ".join(after_kill.stderr.split()), after_kill.stderr
    kg_cli("--wait", "0", "reading", "set", "Switch Transformers", "skipped", store=whole, check=True)
    # compare once both have had the same follow-up write
    return old, new, fingerprint(victim)


YES = ("--yes",)


_COMPLETED = "completed the write of `kg import reading-list` that was journalled"


@pytest.mark.parametrize("bulk, point, outcome, says", [
    (False, "snapshot.taken", "old", "which changed nothing"),
    (False, "store.before-commit", "old", "was interrupted"),
    (False, "store.after-commit", "new", "kept the snapshot taken before `kg import reading-list`"),
    # a large list goes through a journal and the bulk loader (kg.store.bulkwrite)
    (True, "snapshot.taken", "old", "which changed nothing"),
    (True, "store.bulk-diffed", "old", "removed the work of a write that stopped before it changed anything"),
    (True, "store.journalled-transaction", "new", _COMPLETED),
    (True, "store.bulk-graph-applied", "new", _COMPLETED),
    (True, "store.before-commit", "new", _COMPLETED),
    (True, "store.after-commit", "new", "kept the snapshot taken before `kg import reading-list`"),
])
def test_killed_reading_list_import(kg_cli, two_stores, tmp_path: Path, monkeypatch, bulk: bool, point: str,
                                    outcome: str, says: str) -> None:
    if bulk:  # (the commands run below inherit it)
        monkeypatch.setenv("KG_BULK_TRIPLES", "1")
    mine = my_list(tmp_path / "my.md", read=12, drop=3)
    old, new, after = _case(kg_cli, two_stores, point, "import", "reading-list", str(mine), next_says=says)
    _, whole = two_stores
    expected = fingerprint(whole) if outcome == "new" else None
    if outcome == "new":
        assert after == expected
    else:
        assert after != fingerprint(whole) and set(after) == set(old) | set(after)
        kg_cli("import", "reading-list", str(mine), store=two_stores[0], check=True)  # the import still works
    if outcome == "new":
        kg_cli("undo", "--yes", store=two_stores[0], check=True)  # and the snapshot was kept: undo works


def test_killed_restore_leaves_the_store_as_it_was_and_the_next_command_says_it_cleans_up(
    kg_cli, two_stores, tmp_path: Path
) -> None:
    victim, whole = two_stores
    backup = tmp_path / "b.nq.gz"
    kg_cli("reading", "set", "GPipe", "read", store=whole, check=True)
    kg_cli("backup", "-o", str(backup), store=whole, check=True)
    old = fingerprint(victim)
    kill_at("store.staged", "restore", str(backup), "--yes", store=victim)
    out = kg_cli("--wait", "0", "graph", "list", "-f", "json", store=victim, check=True)
    assert fingerprint(victim) == old  # a reader sees the old store, and says nothing of a writer's job
    nxt = kg_cli("--wait", "0", "reading", "set", "Switch Transformers", "skipped", store=victim, check=True)
    assert "staging graph" in nxt.stderr and "unchanged" in nxt.stderr
    assert "staging" not in out.stdout
    kill_at("store.after-commit", "restore", str(backup), "--yes", store=victim)
    kg_cli("--wait", "0", "graph", "list", store=victim, check=True)
    assert fingerprint(victim) == fingerprint(whole)  # the whole backup, although no view was published yet


def test_killed_undo_and_graph_drop(kg_cli, two_stores, tmp_path: Path) -> None:
    victim, _ = two_stores
    kg_cli("import", "reading-list", str(my_list(tmp_path / "l.md", read=10)), store=victim, check=True)
    imported = user_fingerprint(victim)
    kill_at("store.before-commit", "undo", store=victim)
    # the next command, here one that only reads, says what it recovers
    listed = kg_cli("reading", "list", store=victim, check=True)
    assert "`kg undo` of `kg import reading-list`" in " ".join(listed.stderr.split())
    assert "did not happen" in listed.stderr
    assert user_fingerprint(victim) == imported
    kg_cli("undo", store=victim, check=True)  # the undo that did not happen can be done
    undone = user_fingerprint(victim)
    assert undone != imported
    extra = tmp_path / "x.nt"
    extra.write_text('<http://example.org/a> <http://example.org/p> "1" .\n', encoding="utf-8")
    kg_cli("import", "rdf", str(extra), store=victim, check=True)
    before = fingerprint(victim)
    kill_at("store.before-commit", "graph", "drop", "import/x", "--yes", store=victim)
    assert fingerprint(victim) == before
    kill_at("store.after-commit", "graph", "drop", "import/x", "--yes", store=victim)
    assert "https://w3id.org/techkg/graph/import/x" not in fingerprint(victim)


def test_a_killed_backup_leaves_no_file(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "b.nq.gz"
    kill_at("quads.writing", "backup", "-o", str(target), store=built_store_path)
    assert not target.exists() and len(list(tmp_path.glob(".b.nq.gz.*.tmp"))) == 1  # a hidden temporary file
    kg_cli("backup", "-o", str(target), store=built_store_path, check=True)
    assert not list(tmp_path.glob(".b.nq.gz.*"))  # the next backup to the file removed it
    first = target.read_bytes()
    kg_cli("reading", "set", "GPipe", "read", store=built_store_path, check=True)
    kill_at("quads.writing", "backup", "-o", str(target), "--force", store=built_store_path)
    assert target.read_bytes() == first  # a killed backup over an earlier one leaves that one whole
    fresh = tmp_path / "fresh"
    kg_cli("restore", str(target), store=fresh, check=True)
    assert user_fingerprint(fresh) != user_fingerprint(built_store_path)  # the backup from before the change
    kg_cli("backup", "-o", str(target), "--force", store=built_store_path, check=True)
    assert target.read_bytes() != first and not list(tmp_path.glob(".b.nq.gz.*"))


def test_a_killed_first_load_into_an_empty_graph_is_removed_by_the_next_writer(
    kg_cli, built_store_path: Path, tmp_path: Path
) -> None:
    dump = tmp_path / "big.nt"
    dump.write_text("".join(f'<http://example.org/s{i}> <http://example.org/p> "{i}" .\n' for i in range(2000)),
                    encoding="utf-8")
    before = fingerprint(built_store_path)
    kill_at("store.loaded", "import", "rdf", str(dump), store=built_store_path)
    nxt = kg_cli("--wait", "0", "reading", "set", "GPipe", "read", store=built_store_path, check=True)
    said = " ".join(nxt.stderr.split())
    assert "recovering: `kg import rdf`" in said and "removing 2,000 triples of an unfinished load" in said
    after = fingerprint(built_store_path)
    assert "https://w3id.org/techkg/graph/import/big" not in after
    assert {g: h for g, h in after.items() if "reading" not in g} == {
        g: h for g, h in before.items() if "reading" not in g}


@pytest.mark.parametrize("share", [0.3, 0.5, 0.7, 0.9])
def test_a_build_replacing_the_list_killed_at_any_moment_leaves_old_or_new(
    kg_cli, two_stores, tmp_path: Path, share: float
) -> None:
    """Killed at a share of the time the same build took uninterrupted just before (not at
    fixed seconds: under load, start-up alone can take longer than those)."""
    victim, whole = two_stores
    mine = my_list(tmp_path / "my.md", read=11, drop=2)
    old = user_fingerprint(victim)
    started = time.monotonic()
    kg_cli("build", "-r", str(mine), store=whole, check=True)
    took = time.monotonic() - started
    new = user_fingerprint(whole)
    process = start_kg("build", "-r", str(mine), store=victim)
    time.sleep(share * took)
    process.kill()
    kg_cli("--wait", "0", "graph", "list", store=victim, check=True)
    assert user_fingerprint(victim) in (old, new)


_FOLLOW_UP = ("--wait", "0", "reading", "set", "Switch Transformers", "skipped")


def test_a_command_that_only_reads_after_a_kill_says_what_it_recovers(kg_cli, built_store_path: Path) -> None:
    kill_at("store.after-commit", "reading", "set", "GPipe", "read", store=built_store_path)
    listed = kg_cli("reading", "list", "--status", "read", "-f", "json", store=built_store_path, check=True)
    said = " ".join(listed.stderr.split())
    assert "recovering: `kg reading set` (pid" in said and "was interrupted" in said, said
    assert any(r["title"].startswith("GPipe") for r in json.loads(listed.stdout))  # and it sees the commit
    again = kg_cli("reading", "list", store=built_store_path, check=True)
    assert "recovering" not in again.stderr  # said once


@pytest.mark.parametrize("command, point, outcome", [
    ("set", "store.before-commit", "old"),
    ("set", "store.after-commit", "new"),
    ("import-rdf", "store.before-commit", "old"),
    ("import-rdf", "store.after-commit", "new"),
    ("build-r", "snapshot.taken", "old"),
    ("build-r", "store.after-commit", "new"),
    ("undo", "snapshot.taken", "old"),
    ("undo", "store.after-commit", "new"),
    ("restore", "snapshot.taken", "old"),
    ("reimport-rdf", "store.journalled", "new"),
])
def test_every_write_path_killed_at_each_moment_leaves_old_or_new_and_the_next_command_says_so(
    kg_cli, two_stores, tmp_path: Path, command: str, point: str, outcome: str
) -> None:
    victim, whole = two_stores
    untouched = tmp_path / "untouched"
    shutil.copytree(victim, untouched)
    extra = tmp_path / "x.nt"
    extra.write_text('<http://example.org/a> <http://example.org/p> "1" .\n', encoding="utf-8")
    mine = my_list(tmp_path / "my.md", read=9, drop=2)
    if command == "reimport-rdf":  # an import graph that holds data: replaced by the difference
        for store in (victim, whole, untouched):
            kg_cli("import", "rdf", str(extra), store=store, check=True)
        extra.write_text("".join(f'<http://example.org/s{i}> <http://example.org/p> "{i}" .\n' for i in range(500)),
                         encoding="utf-8")
    if command in ("undo", "restore"):  # something to undo, or a backup of another state
        for store in (victim, whole, untouched):
            kg_cli("import", "reading-list", str(mine), store=store, check=True)
    if command == "restore":
        kg_cli("backup", "-o", str(tmp_path / "b.nq.gz"), store=victim, check=True)
        for store in (victim, whole, untouched):
            kg_cli("reading", "set", "GPipe", "skipped", store=store, check=True)
    args = {"set": ("reading", "set", "GPipe", "read"), "import-rdf": ("import", "rdf", str(extra)),
            "reimport-rdf": ("import", "rdf", str(extra)),
            "build-r": ("build", "-r", str(mine)), "undo": ("undo", "--yes"),
            "restore": ("restore", str(tmp_path / "b.nq.gz"), "--yes")}[command]
    kg_cli(*args, store=whole, check=True)
    kill_at(point, *args, store=victim)
    nxt = kg_cli(*_FOLLOW_UP, store=victim, check=True)
    assert "recovering" in nxt.stderr, nxt.stderr
    for store in (whole, untouched):
        kg_cli(*_FOLLOW_UP, store=store, check=True)
    old, new = fingerprint(untouched), fingerprint(whole)  # each after the same follow-up
    assert old != new  # the command changed something, so old and new can be told apart
    assert fingerprint(victim) == (old if outcome == "old" else new)


@pytest.mark.parametrize("point", ["store.before-commit", "store.after-commit"])
def test_a_sync_killed_before_or_after_its_commit_leaves_old_or_new_and_the_next_sync_makes_no_duplicates(
    kg_cli, built_store_path: Path, point: str
) -> None:
    from ingest.emulators.zotero import ZoteroEmulator
    from tests.sync.conftest import KEY, USER_ID

    with ZoteroEmulator(seed=7) as emulator:
        emulator.add_library("user", USER_ID, name="reader")
        emulator.add_key(KEY, user_id=USER_ID)
        env = {"ZOTERO_API_URL": emulator.url, "ZOTERO_LIBRARY": f"user:{USER_ID}", "ZOTERO_API_KEY": KEY}
        old = user_fingerprint(built_store_path)
        kill_at(point, "sync", "zotero", store=built_store_path, env=env)
        shutil.copytree(built_store_path, built_store_path.with_name("as-killed"))  # looked at without touching
        # the commit is all of the graph's side or none of it (Zotero was written before it)
        assert (user_fingerprint(built_store_path.with_name("as-killed")) == old) is (point == "store.before-commit")
        again = kg_cli("--wait", "0", "sync", "zotero", store=built_store_path, env=env, check=True)
        assert "recovering: `kg sync zotero`" in " ".join(again.stderr.split()), again.stderr
        assert len(emulator.library("user", USER_ID).top_items()) == 53  # none created twice
        settled = kg_cli("sync", "zotero", store=built_store_path, env=env, check=True)
        assert "nothing to change on either side" in settled.stdout
