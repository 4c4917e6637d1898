"""A transaction of many triples goes through a journal and the bulk loader
(kg.store.bulkwrite): it leaves the store a single update leaves, step order included.
(Kills at each of its moments: tests/store/test_kills.py.)"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.graphs import PROVENANCE
from kg.store import bulkwrite
from kg.store.base import Activity, Data
from kg.store.embedded import OxigraphStore

EX = "http://example.org/"
A, B, C = (ox.NamedNode(EX + g) for g in ("a", "b", "c"))
P, Q = ox.NamedNode(EX + "p"), ox.NamedNode(EX + "q")


def _t(i: int, p: ox.NamedNode = P, value: str | None = None) -> ox.Triple:
    return ox.Triple(ox.NamedNode(f"{EX}s{i}"), p, ox.Literal(value if value is not None else f"v{i}", language="en"))


def _store(path: Path) -> OxigraphStore:
    store = OxigraphStore(path)
    with store.transaction(Activity("the old content")) as tx:
        tx.replace_graph(A, [_t(i) for i in range(300)])
        tx.insert(B, [_t(i, Q) for i in range(100)])
    return store


def _write(store: OxigraphStore) -> None:
    with store.transaction(Activity("kg test write")) as tx:
        # half the old graph stays, half goes, and as much is new
        tx.replace_graph(A, [_t(i) for i in range(150, 450)] + [_t(i, Q, "q") for i in range(5)])
        tx.delete(B, [_t(i, Q) for i in range(60)] + [_t(999, Q)])  # one it does not hold
        tx.insert(B, [_t(i, Q) for i in range(50, 55)] + [_t(i, P, "new") for i in range(40)])  # back in: held
        # a raw update after the data reads the graphs as the steps before it left them
        tx.update(f"INSERT {{ GRAPH {C} {{ ?s {P} ?o }} }} WHERE {{ GRAPH {A} {{ ?s {Q} ?o }} }}", touches=[C])


def _content(store: OxigraphStore) -> tuple[set[str], dict[str, str]]:
    quads = {str(q) for q in store._store.quads_for_pattern(None, None, None, None) if q.graph_name != PROVENANCE}
    records = {str(r["g"]): f"{r['n']} {r['h']}" for r in store.select(
        f"SELECT ?g ?n ?h WHERE {{ GRAPH {PROVENANCE} {{ ?g tkg:tripleCount ?n "
        "OPTIONAL { ?g tkg:contentHash ?h } } }").records()}
    return quads, records


def test_a_bulk_transaction_leaves_what_one_update_leaves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = _store(tmp_path / "one")
    _write(one)
    prepared: list[Path] = []
    real = bulkwrite.prepare

    def spy(store, the_plan, folder, *, activity):  # type: ignore[no-untyped-def]
        prepared.append(folder)
        return real(store, the_plan, folder, activity=activity)

    monkeypatch.setenv("KG_BULK_TRIPLES", "100")
    monkeypatch.setattr(bulkwrite, "prepare", spy)
    bulk = _store(tmp_path / "bulk")
    _write(bulk)
    assert len(prepared) == 2  # (the old content went in bulk too)
    assert _content(bulk) == _content(one)
    quads, _ = _content(bulk)
    assert f"<{EX}s0> <{EX}q> \"v0\"@en <{EX}b>" not in quads and f"<{EX}s52> <{EX}q> \"v52\"@en <{EX}b>" in quads
    assert sum(f"<{EX}c>" in q for q in quads) == 5
    assert not any((tmp_path / "bulk" / bulkwrite.WORK_FOLDER).iterdir())  # the journal went
    one.close()
    bulk.close()


def test_a_reader_opened_after_a_bulk_write_sees_it_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_BULK_TRIPLES", "100")
    store = _store(tmp_path / "s")
    _write(store)
    store.close()
    with OxigraphStore.open_reader(tmp_path / "s") as reader:
        assert reader.count(A) == 305 and reader.count(C) == 5


def test_only_leading_data_without_blank_nodes_goes_in_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_BULK_TRIPLES", "10")
    many = Data("insert", A, [_t(i) for i in range(20)])
    raw = f"DELETE WHERE {{ GRAPH {B} {{ ?s ?p ?o }} }}"
    planned = bulkwrite.plan([many, Data("delete", B, [_t(1)]), raw, Data("insert", A, [_t(99)])])
    assert planned is not None
    assert {g: len(ops) for g, ops in planned.bulk.items()} == {A: 1, B: 1}
    assert planned.rest[0] == raw and len(planned.rest) == 2  # the data after a raw update stays in it
    assert bulkwrite.plan([raw, many]) is None
    assert bulkwrite.plan([Data("insert", A, [_t(i) for i in range(5)])]) is None  # below the threshold
    blank = ox.Triple(ox.BlankNode(), P, ox.Literal("x"))
    assert bulkwrite.plan([Data("insert", A, [*many.triples, blank])]) is None


def test_a_threshold_that_is_not_a_number_is_refused_and_nothing_is_written(kg_cli, built_store_path: Path,
                                                                           tmp_path: Path) -> None:
    from kg.graphs import READING_LIST
    from tests.store.lists import my_list

    def listed() -> int:
        with OxigraphStore.open_reader(built_store_path) as store:
            return store.count(READING_LIST)

    before = listed()
    done = kg_cli("import", "reading-list", str(my_list(tmp_path / "l.md", read=3, drop=2)), store=built_store_path,
                  env={"KG_BULK_TRIPLES": "lots"})
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "KG_BULK_TRIPLES='lots' is not a whole number" in message and "unset it" in message
    assert listed() == before
