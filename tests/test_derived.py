"""kg.derived, the one mechanism that keeps derived data current: what writes say they
changed adds up, and the keepers are handed it once, side by side, each line said."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kg import derived
from kg.derived import Changes


@dataclass
class Keeper:
    """A keeper of nothing that records what it was handed (pure logic: no store)."""

    name: str
    token: Any = True
    line: str | None = None
    fail: bool = False
    bad_setting: bool = False
    barrier: threading.Barrier | None = None
    imports: tuple[str, ...] = ("json",)
    handed: list[Changes] = field(default_factory=list)

    def before(self, store: Any) -> Any:
        return self.token

    def after(self, store: Any, changes: Changes, token: Any) -> str | None:
        self.handed.append(changes)
        if self.barrier is not None:
            self.barrier.wait(timeout=5)  # both keepers at once, or a BrokenBarrierError
        if self.fail:
            raise RuntimeError("disk full")
        if self.bad_setting:
            from kg.settings import count_setting

            count_setting("KG_TEST_KEEP", 5)
        return self.line


def test_documents_add_up_and_an_unknown_extent_stays_unknown() -> None:
    changes = Changes(graphs={"g1"})
    changes.add(Changes(documents={"p1"}, described={"reading"}))
    assert changes.described == {"reading"} and changes.documents == {"p1"}
    changes.add(Changes(documents={"t1"}, described=None))
    changes.add(Changes(documents={"p2"}, described={"links"}))
    assert changes.described is None and changes.documents == {"p1", "p2", "t1"}
    assert Changes(described=None) and not Changes()


def test_the_keepers_are_handed_the_changes_once_side_by_side() -> None:
    store = object()
    barrier = threading.Barrier(2)
    first, second = Keeper("tables", barrier=barrier, line="tables: a line"), Keeper("index", barrier=barrier)
    watch = derived.watch(store, [first, second])
    assert derived.record(store, Changes(graphs={"reading"}, papers={"p"}))
    assert derived.record(store, Changes(documents={"p"}, described={"reading"}))
    said: list[str] = []
    watch.finish(said.append)
    assert said == ["tables: a line"]
    assert len(first.handed) == len(second.handed) == 1
    assert first.handed[0].documents == {"p"} and first.handed[0].graphs == {"reading"}
    assert not derived.record(store, Changes(graphs={"reading"})), "a finished watch takes nothing more"
    watch.finish(said.append)
    assert len(first.handed) == 1


def test_a_keeper_that_fails_is_said_and_the_others_keep_their_views() -> None:
    store = object()
    failing, other = Keeper("search index", fail=True), Keeper("analytics tables", line="kept")
    watch = derived.watch(store, [failing, other])
    derived.record(store, Changes(graphs={"g"}))
    said: list[str] = []
    watch.finish(said.append)
    assert said == ["the search index could not be brought up to date (disk full)", "kept"]
    assert other.handed


def test_a_keeper_stopped_by_a_bad_setting_says_how_to_fix_it(monkeypatch) -> None:
    monkeypatch.setenv("KG_TEST_KEEP", "many")
    store = object()
    watch = derived.watch(store, [Keeper("search index", bad_setting=True)])
    derived.record(store, Changes(graphs={"g"}))
    said: list[str] = []
    watch.finish(said.append)
    assert said == ["the search index could not be brought up to date (KG_TEST_KEEP='many' is not a whole number). "
                    "Set KG_TEST_KEEP to a count such as 5, or unset it for the default (5)."]


def test_nothing_is_handed_without_changes_or_to_a_keeper_with_no_view() -> None:
    store = object()
    stale, kept = Keeper("stale", token=None), Keeper("kept")
    watch = derived.watch(store, [stale, kept])
    watch.finish(lambda line: None)
    assert not kept.handed
    watch = derived.watch(store, [stale, kept])
    derived.record(store, Changes(graphs={"g"}))
    watch.finish(lambda line: None)
    assert not stale.handed and len(kept.handed) == 1


def test_in_the_background_each_write_is_handed_over_and_readers_are_told_while_one_is_pending() -> None:
    store = object()
    keeper = Keeper("tables")
    told: list[bool] = []
    said: list[str] = []
    background = derived.Background(store, said.append, [keeper], pending=told.append)
    try:
        assert derived.record(store, Changes(graphs={"reading"}, papers={"p1"}))
        assert told[0] is True, "told as the write is recorded, before its reply goes out"
        deadline = time.monotonic() + 5
        while not (keeper.handed and told[-1] is False) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert keeper.handed and keeper.handed[0].papers == {"p1"} and told[-1] is False
        keeper.line, keeper.token = "the tables are stale now", None  # the next one cannot be kept
        derived.record(store, Changes(graphs={"reading"}, papers={"p2"}))
        while not said and time.monotonic() < deadline:
            time.sleep(0.01)
        assert said == ["the tables are stale now"]
        derived.record(store, Changes(graphs={"reading"}, papers={"p3"}))  # not kept: stale
    finally:
        background.close()
    assert [c.papers for c in keeper.handed] == [{"p1"}, {"p2"}]
    assert not derived.record(store, Changes(graphs={"g"})), "a closed background takes nothing more"
