"""Property: random sequences of reading-list imports, builds, status changes, Zotero
syncs, lineage decisions, backups, restores and undos never lose a triple of the user's own graphs that the
sequence did not remove on purpose.

After each step the user's graphs (reading state, reading list, Zotero sync state, lineage
decisions) are compared with what they were before it:

- ``build`` (without ``-r``, forced or not) and ``backup`` remove nothing;
- ``set`` removes only that paper's current status;
- ``import`` / ``build -r`` replace the reading list: the list's own triples and current
  statuses may go, reading events never;
- ``sync`` may change current statuses and its own sync state, nothing else;
- ``decide`` (accepting or rejecting a suggested lineage edge) may change only the lineage
  decisions;
- ``restore`` gives exactly the user's graphs of the backup;
- ``undo`` gives exactly the user's graphs as they were before the last step that took a
  snapshot (a model stack, of at most 20, mirrors the store's).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.emulators.zotero import ZoteroEmulator
from ingest.zotero import LibrarySpec, connect
from ingest.zotero_sync import SyncOptions, sync
from kg.backup import backup, restore
from kg.build import build, default_reading_list
from kg.catalog import load_catalog
from kg.decisions import accept, reject
from kg.errors import NotFoundError
from kg.graphs import LINEAGE_DECISIONS, READING, READING_LIST, USER_GRAPHS, ZOTERO_SYNC
from kg.reading import import_reading_list, resolve_paper, set_status
from kg.store.embedded import OxigraphStore
from kg.store.snapshots import SNAPSHOT_LIMIT, snapshots_for
from kg.suggestions import Suggestion, suggestion_id, techniques
from kg.undo import undo
from kg.vocab import LINEAGE_RELATIONS, TKG
from tests.store.lists import my_list
from tests.sync.conftest import FAST, KEY

EXAMPLES = int(os.environ.get("TKG_PROPERTY_EXAMPLES", "8"))
PAPERS = ["GPipe", "ZeRO: Memory", "Switch Transformers", "Mixed Precision Training", "Megatron-LM"]
STEPS = st.lists(st.one_of(
    st.tuples(st.just("import"), st.integers(0, 3)),
    st.tuples(st.just("build"), st.booleans()),
    st.tuples(st.just("build-r"), st.integers(0, 3)),
    st.tuples(st.just("set"), st.integers(0, len(PAPERS) - 1), st.sampled_from(["read", "reading", "skipped"])),
    st.tuples(st.just("sync")),
    st.tuples(st.just("decide"), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("backup")),
    st.tuples(st.just("restore"), st.integers(0, 5)),
    st.tuples(st.just("undo")),
), min_size=2, max_size=7)
_T = "https://w3id.org/techkg/id/technique/"
#: child → parent pairs that the catalog does not hold as lineage (the suggestions to decide on)
PAIRS = [(_T + "mqa", _T + "zero"), (_T + "gqa", _T + "muon"), (_T + "kda", _T + "ppo"), (_T + "zero", _T + "grpo")]
CURRENT = {TKG.readingStatus.value, TKG.statusChangedAt.value}
Quad = tuple[str, str, str, str]


def user_state(store: OxigraphStore) -> set[Quad]:
    return {(g.value, str(t.subject), t.predicate.value, str(t.object)) for g in USER_GRAPHS for t in store.triples(g)}


def explained(step: str, quad: Quad, paper: str | None) -> bool:
    graph, subject, predicate, _ = quad
    if step in ("import", "build-r"):
        return graph == READING_LIST.value or (graph == READING.value and predicate in CURRENT)
    if step == "set":
        return graph == READING.value and predicate in CURRENT and subject == f"<{paper}>"
    if step == "sync":
        return graph == ZOTERO_SYNC.value or (graph == READING.value and predicate in CURRENT)
    if step == "decide":  # a later decision on the same pair replaces the earlier one
        return graph == LINEAGE_DECISIONS.value
    return False  # build, backup


class Sequence:
    """One example: a store, a Zotero library, the files and the model."""

    library_ids = itertools.count(910_000)

    def __init__(self, built: Path, emulator: ZoteroEmulator, lists: list[Path], work: Path) -> None:
        self.work = work
        shutil.copytree(built, work / "store")
        self.store = OxigraphStore(work / "store")
        library_id = next(self.library_ids)
        emulator.add_library("user", library_id)
        self.api = connect(LibrarySpec("user", library_id), key=KEY, api_url=emulator.url, retry=FAST)
        self.lists = lists
        self.catalog = load_catalog()
        self.backups: list[tuple[Path, set[Quad]]] = []
        self.undo_stack: list[set[Quad]] = []

    def close(self) -> None:
        self.api.close()
        self.store.close()

    def newest_snapshot(self) -> str | None:
        kept = snapshots_for(self.store).kept()
        return kept[0].id if kept else None

    def step(self, step: tuple[object, ...]) -> None:
        kind = str(step[0])
        before = user_state(self.store)
        newest = self.newest_snapshot()
        paper = None
        if kind == "import":
            import_reading_list(self.store, self.lists[int(step[1])], self.catalog)  # type: ignore[call-overload]
        elif kind == "build":  # forced or not: with nothing changed, a build does nothing at all
            build(self.store, validate=False, force=bool(step[1]))
        elif kind == "build-r":
            build(self.store, reading_list=self.lists[int(step[1])], validate=False)  # type: ignore[call-overload]
        elif kind == "set":
            node = resolve_paper(self.store, PAPERS[int(step[1])])  # type: ignore[call-overload]
            paper = node.value
            set_status(self.store, node, str(step[2]))
        elif kind == "sync":
            report = sync(self.store, self.api, SyncOptions())
            assert not report.failed
        elif kind == "decide":  # a reader's verdict on a suggested edge between two techniques
            known = techniques(self.store)
            child, parent = (known[iri] for iri in PAIRS[int(step[1])])  # type: ignore[call-overload]
            suggestion = Suggestion(suggestion_id(child.iri, parent.iri), child, parent, LINEAGE_RELATIONS[0], 0.5)
            (accept if step[2] else reject)(self.store, suggestion)
        elif kind == "backup":
            path = self.work / f"backup-{len(self.backups)}.nq.gz"
            backup(self.store, path)
            self.backups.append((path, before))
        elif kind == "restore":
            if not self.backups:
                return
            path, state = self.backups[int(step[1]) % len(self.backups)]  # type: ignore[call-overload]
            restore(self.store, path, yes=True)
            assert user_state(self.store) == state, "a restore did not give the backup's graphs"
        elif kind == "undo":
            try:
                undo(self.store, yes=True)
            except NotFoundError:
                assert not self.undo_stack, "kg undo found nothing although a snapshot was taken"
                assert user_state(self.store) == before
                return
            assert self.undo_stack, "kg undo restored a snapshot the model does not know"
            assert user_state(self.store) == self.undo_stack.pop(), "kg undo did not give the state before"
            return
        after = user_state(self.store)
        if kind != "restore":  # a restore removes on purpose whatever the backup lacks (checked above)
            lost = [q for q in before - after if not explained(kind, q, paper)]
            assert not lost, f"{kind} lost {len(lost)} user triples, e.g. {lost[:3]}"
        if self.newest_snapshot() != newest:
            self.undo_stack = [*self.undo_stack, before][-SNAPSHOT_LIMIT:]


@given(steps=STEPS)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_random_sequences_never_lose_a_user_triple_they_did_not_remove_on_purpose(
    built_store_dir: Path, zotero: ZoteroEmulator, reading_lists: list[Path], steps: list[tuple[object, ...]]
) -> None:
    with tempfile.TemporaryDirectory(prefix="i13-property-") as tmp:
        sequence = Sequence(built_store_dir, zotero, reading_lists, Path(tmp))
        try:
            for step in steps:
                sequence.step(step)
        finally:
            sequence.close()


def test_the_reading_events_of_a_sequence_survive_every_replacement(built_store_dir: Path, zotero: ZoteroEmulator,
                                                                     reading_lists: list[Path]) -> None:
    """The fixed sequence the property is about, spelled out once."""
    with tempfile.TemporaryDirectory(prefix="i13-property-") as tmp:
        sequence = Sequence(built_store_dir, zotero, reading_lists, Path(tmp))
        try:
            for step in [("set", 0, "read"), ("decide", 0, True), ("import", 1), ("sync",), ("build", True),
                         ("backup",), ("decide", 1, False), ("build-r", 2), ("undo",), ("restore", 0), ("undo",)]:
                sequence.step(step)
            decisions = sequence.store.triples(LINEAGE_DECISIONS)
            assert any(t.predicate.value.endswith("wasDerivedFrom") for t in decisions)  # the accepted edge
            events = sequence.store.select("SELECT (COUNT(?e) AS ?n) WHERE { ?e a tkg:ReadingEvent }").rows[0]["n"]
            assert isinstance(events, ox.Literal) and int(events.value) > 53
        finally:
            sequence.close()


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zotero():
    with ZoteroEmulator(seed=13) as emu:
        emu.add_key(KEY, user_id=910_000)
        yield emu


@pytest.fixture(scope="module")
def reading_lists(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("lists")
    return [default_reading_list(), my_list(folder / "a.md", read=12, drop=2),
            my_list(folder / "b.md", read=9, drop=5, rename=("LLM Training / RL Training", "RL")),
            my_list(folder / "c.md", read=20, drop=0)]
