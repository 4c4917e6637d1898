"""An incremental build after reading-status changes patches the answer tables: only the
rows of the papers whose status changed are made again, and every answer table is then
the one a full build makes, row for row and in its stored order."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode

from kg.analytics import build, connect
from kg.analytics.stored import default_params, has_tail, order_sql, tail_table
from kg.analytics.twins import TWINS
from kg.graphs import READING, graph_iri
from kg.reading import resolve_paper, set_status, status_removal
from kg.store.base import Activity

#: The twins a build keeps an answer table of (the others answer from the staged facts).
KEPT = {name for name, twin in TWINS.items() if twin.kept or twin.stored is not None}
#: The answers whose rows each show one paper's reading state: those a status change patches.
STATUS_ANSWERS = {name for name, twin in TWINS.items() if twin.by_paper is not None} & KEPT


def answer_tables(db: Path) -> dict[str, Any]:
    """Every answer table's rows in their order, a tail's rows merged in by the page key
    (those kept in no order: sorted), and the column types of them all. A table kept in
    order must be in it, row for row."""
    import queries

    con = connect(db, read_only=True)
    try:
        out: dict[str, Any] = {}
        for name in KEPT:
            table = f'answers."{name}"'
            rows = con.execute(f"SELECT * FROM {table}").fetchall()
            if default_params(name) is None and not TWINS[name].in_order:
                out[name] = sorted(rows, key=repr)
                continue
            order = order_sql(queries.get(name))
            assert rows == con.execute(f"SELECT * EXCLUDE (__at) FROM (SELECT *, rowid AS __at FROM {table}) "
                                       f"ORDER BY {order}, __at").fetchall(), name
            if has_tail(con, name):  # (on a tie, the table's row first)
                rows = con.execute(f"""SELECT * EXCLUDE (__from, __at) FROM (
                    SELECT *, 0 AS __from, rowid AS __at FROM {table}
                    UNION ALL SELECT *, 1, rowid FROM {tail_table(name)}) ORDER BY {order}, __from, __at""").fetchall()
            out[name] = rows
        out["(types)"] = con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE schema_name = 'answers' "
            "ORDER BY table_name, column_index").fetchall()
        return out
    finally:
        con.close()


def tails(db: Path) -> set[str]:
    """The answer tables that have a tail."""
    con = connect(db, read_only=True)
    try:
        return {name for name in KEPT if has_tail(con, name)}
    finally:
        con.close()


def tables(db: Path) -> dict[str, Any]:
    """Every analytics table's rows, sorted (a patched table keeps no order)."""
    from kg.analytics.tables import TABLES

    con = connect(db, read_only=True)
    try:
        return {t.name: sorted(con.execute(f"SELECT * FROM main.{t.name}").fetchall(), key=repr) for t in TABLES}
    finally:
        con.close()


def assert_as_a_full_build(store: Any, db: Path, tmp_path: Path, name: str) -> None:
    full = tmp_path / f"{name}.analytics.duckdb"
    assert build(store, full).mode == "full"
    patched, whole = answer_tables(db), answer_tables(full)
    for table in whole:
        assert patched[table] == whole[table], table
    patched, whole = tables(db), tables(full)
    for table in whole:  # the tables too, patched or kept, row for row
        assert patched[table] == whole[table], table


def bench_paper(store: Any, *, with_status: bool) -> NamedNode:
    """A paper of the corpus graph that uses a technique and has a status there (none in
    the reading state), or none at all."""
    found = "" if with_status else "NOT"
    rows = store.select(f"""SELECT ?p WHERE {{ GRAPH {graph_iri("bench")} {{ ?p a bibo:Document }}
        FILTER {found} EXISTS {{ GRAPH {graph_iri("bench")} {{ ?p tkg:readingStatus ?s }} }}
        FILTER NOT EXISTS {{ GRAPH {READING} {{ ?p tkg:readingStatus ?r }} }}
        FILTER EXISTS {{ ?p tkg:usesTechnique ?t }} }} ORDER BY ?p LIMIT 1""").rows
    assert rows, "the corpus should have such a paper"
    paper: NamedNode = rows[0]["p"]
    return paper


def at(day: int) -> dt.datetime:
    return dt.datetime(2026, 7, day, 9, 0, tzinfo=dt.UTC)


def test_after_status_changes_every_answer_table_is_the_one_a_full_build_makes(analysed_store: Any, db_of: Any,
                                                                               tmp_path: Path) -> None:
    store = analysed_store
    db = db_of(Path(store.location))
    gpipe, ring, zero, megatron = (resolve_paper(store, t) for t in ("GPipe", "Ring Attention", "ZeRO", "Megatron-LM"))
    listed, unlisted = bench_paper(store, with_status=True), bench_paper(store, with_status=False)
    added_then_read = store.select(f"""SELECT ?p WHERE {{ GRAPH {READING} {{ ?p tkg:readingStatus ?s }}
        FILTER(STRSTARTS(STR(?p), "http://bench.techkg.invalid/")) }}""").rows[0]["p"]
    # rows that change in place, and move down or up the stored order
    set_status(store, zero, "read", at=dt.datetime(2025, 12, 1, tzinfo=dt.UTC))  # read earlier: down read-without-note
    set_status(store, unlisted, "to-read", at=at(1))  # a first status: added to the reading state
    report = build(store, db)
    assert report.mode == "incremental" and report.changed_graphs == ["reading"]
    assert set(report.patched) == STATUS_ANSWERS and report.answers == {}
    assert_as_a_full_build(store, db, tmp_path, "first")
    set_status(store, added_then_read, "read", at=at(2))  # read again, later: up read-without-note
    set_status(store, listed, "reading", at=at(3))  # a second status, beside the corpus graph's
    assert set(build(store, db).patched) == STATUS_ANSWERS
    assert_as_a_full_build(store, db, tmp_path, "second")

    # papers that enter and leave the queue and the read papers, and the reading state
    set_status(store, gpipe, "to-read", at=at(4))
    set_status(store, ring, "read", at=at(5))
    with store.transaction(Activity("zotero sync (test)")) as tx:
        status_removal(tx, megatron, previous="read", via="zotero", at=at(6))
    report = build(store, db)
    assert set(report.patched) == STATUS_ANSWERS and report.answers == {}
    assert_as_a_full_build(store, db, tmp_path, "third")

    set_status(store, gpipe, "read", at=at(7))  # and back
    set_status(store, megatron, "skipped", at=at(8))
    set_status(store, ring, "Waiting for code", at=at(9))  # a status of one's own: its label is new too
    report = build(store, db)
    # (the answers that read labels are made whole: which labels they show is not narrowed to papers)
    assert set(report.patched) == {"lineage-paper-links", "lineage-papers", "bibliography"}
    assert set(report.answers) == KEPT - set(report.patched)
    assert_as_a_full_build(store, db, tmp_path, "fourth")


def test_a_status_change_patches_only_the_answers_that_show_statuses(analysed_store: Any, db_of: Any) -> None:
    store = analysed_store
    db = db_of(Path(store.location))
    before = answer_tables(db)
    set_status(store, resolve_paper(store, "Ring Attention"), "to-read", at=at(1))
    report = build(store, db)
    assert report.answers == {} and set(report.patched) == STATUS_ANSWERS
    assert report.patched["bibliography"] == 1  # the paper's own row, made again
    after = answer_tables(db)
    assert {name for name in KEPT if after[name] != before[name]} <= STATUS_ANSWERS
    assert after["lineage-nodes"] == before["lineage-nodes"] and after["repositories"] == before["repositories"]


def test_a_status_change_of_a_paper_without_links_leaves_the_lineage_answers_as_they_are(
        analysed_store: Any, db_of: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kg.analytics.stored as stored

    store = analysed_store
    db = db_of(Path(store.location))
    unlinked = store.select("""SELECT ?p WHERE { ?p tkg:readingStatus ?s
        FILTER NOT EXISTS {
          ?p tkg:introducesTechnique|tkg:extendsTechnique|tkg:usesTechnique|tkg:evaluatesTechnique ?t }
        FILTER NOT EXISTS { ?u tkg:primaryPaper ?p } } ORDER BY ?p LIMIT 1""").rows[0]["p"]
    linked = resolve_paper(store, "Ring Attention")
    remade: list[str] = []
    real = stored._patch
    monkeypatch.setattr(stored, "_patch", lambda con, name, *rest: remade.append(name) or real(con, name, *rest))
    set_status(store, unlinked, "reading", at=at(1))
    report = build(store, db)
    assert set(report.patched) == STATUS_ANSWERS  # (its rows there: none, as before)
    lineage = {"lineage-papers", "lineage-paper-links", "reading-queue-lineage"}
    assert all(report.patched[name] == 0 for name in lineage)
    assert not lineage & set(remade) and "reading-list" in remade
    assert_as_a_full_build(store, db, tmp_path, "unlinked")
    remade.clear()
    set_status(store, linked, "skipped", at=at(2))  # a paper with links: its rows get the new status
    report = build(store, db)
    assert report.patched["lineage-paper-links"] > 0 and "lineage-paper-links" in remade
    assert_as_a_full_build(store, db, tmp_path, "linked")


def test_another_graph_changed_with_a_status_remakes_the_answers_that_read_it(analysed_store: Any, db_of: Any,
                                                                               tmp_path: Path) -> None:
    import pyoxigraph as ox

    store = analysed_store
    db = db_of(Path(store.location))
    paper = resolve_paper(store, "GPipe")
    set_status(store, paper, "reading", at=at(1))
    dois = tmp_path / "dois.nt"
    dois.write_text(f'{paper} <http://purl.org/ontology/bibo/doi> "10.9999/kg-test" .\n', encoding="utf-8")
    store.load_file(dois, graph=graph_iri("import/dois"), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                    activity=Activity("kg import rdf"))
    report = build(store, db)
    assert set(report.changed_graphs) == {"reading", "import/dois"}
    assert set(report.answers) == {"bibliography", "lineage-papers"}  # they show DOIs
    assert set(report.patched) == STATUS_ANSWERS - set(report.answers)
    assert_as_a_full_build(store, db, tmp_path, "full")


@pytest.mark.parametrize("limit", ["COMPARE_FACTS", "COMPARE_FACTS grown past", "PATCH_PAPERS"])
def test_past_the_limits_of_a_patch_the_answers_are_made_whole(analysed_store: Any, db_of: Any, tmp_path: Path,
                                                               monkeypatch: Any, limit: str) -> None:
    from kg.analytics import materialize, stored

    store = analysed_store
    db = db_of(Path(store.location))
    # a reading graph too big to compare (before the change, or after it), or more papers changed than a patch takes
    con = connect(db, read_only=True)
    reading = con.execute("SELECT facts FROM staging.graphs WHERE name = 'reading'").fetchall()[0][0]
    con.close()
    monkeypatch.setattr(materialize if limit.startswith("COMPARE") else stored, limit.split()[0],
                        reading if limit.endswith("grown past") else 0)
    set_status(store, resolve_paper(store, "Ring Attention"), "read", at=at(1))
    set_status(store, resolve_paper(store, "GPipe"), "to-read", at=at(2))
    report = build(store, db)
    assert report.mode == "incremental" and report.patched == {}
    if limit == "PATCH_PAPERS":  # (the facts compared: only what reads statuses)
        assert set(report.answers) == STATUS_ANSWERS
    else:  # (whatever reads a kind of fact the reading graph holds: its statuses' labels too)
        assert set(report.answers) > STATUS_ANSWERS
    assert_as_a_full_build(store, db, tmp_path, "full")


def test_an_interrupted_incremental_build_leaves_the_file_as_it_was(analysed_store: Any, db_of: Any,
                                                                   tmp_path: Path) -> None:
    import kg.answer
    import queries
    from kg.analytics.answers import tables_answer

    store = analysed_store
    db = db_of(Path(store.location))
    before = answer_tables(db)
    named = queries.get("reading-queue")
    first = kg.answer.answer(store, named, limit=20, analytics=True)
    assert first.source == "duckdb"
    first_page = list(first.page)
    del first  # (an answer holds the file open for the rest of its rows: a write would wait for it)
    set_status(store, resolve_paper(store, "Ring Attention"), "read", at=at(1))
    set_status(store, resolve_paper(store, "GPipe"), "to-read", at=at(2))

    def interrupted(phase: str, done: int, total: int) -> None:
        if phase == "answers" and done == 4:
            raise KeyboardInterrupt  # as a user's Ctrl-C, with four answers patched

    with pytest.raises(KeyboardInterrupt):
        build(store, db, progress=interrupted)
    assert answer_tables(db) == before
    con = connect(db, read_only=True)
    assert con.execute("SELECT count(*) FROM builds").fetchall() == [(1,)]
    unchanged = tables_answer(con, db, named, {}, limit=20, after=None, store=store)  # (closes con)
    assert unchanged is not None and list(unchanged.page) == first_page
    stale = kg.answer.answer(store, named, limit=20, analytics=True)
    assert stale.source == "sparql" and "stale" in stale.note  # the file is not fresh: never its rows
    report = build(store, db)
    assert report.mode == "incremental" and set(report.patched) == STATUS_ANSWERS
    assert_as_a_full_build(store, db, tmp_path, "full")


@pytest.mark.parametrize("placed", ["in one batch", "across batches"])
def test_rows_put_in_a_tail_are_read_in_their_place_whole_and_page_by_page(analysed_store: Any, db_of: Any,
                                                                              monkeypatch: Any, placed: str) -> None:
    import io
    import json

    import kg.answer
    import queries
    from kg.analytics import answers
    from kg.resolve import Resolver
    from kg.results import python_value

    if placed == "across batches":  # a tail row's place found in a later batch of the table's rows
        monkeypatch.setattr(answers, "_BATCH", 3)
    store = analysed_store
    db = db_of(Path(store.location))
    # read first: GPipe joins the queue, Ring Attention joins the papers read without a note
    set_status(store, resolve_paper(store, "GPipe"), "read", at=at(1))
    set_status(store, resolve_paper(store, "Ring Attention"), "to-read", at=at(1))
    build(store, db)
    set_status(store, resolve_paper(store, "GPipe"), "to-read", at=at(2))
    set_status(store, resolve_paper(store, "Ring Attention"), "read", at=at(3))
    set_status(store, bench_paper(store, with_status=False), "to-read", at=at(4))
    build(store, db)
    assert {"reading-queue", "read-without-note"} <= tails(db)
    cases: list[tuple[str, dict[str, str]]] = [(name, {}) for name in sorted(tails(db))
                                               if default_params(name) is not None]
    cases += [("reading-list", {"status": "to-read"}), ("reading-list", {})]
    for name, params in cases:
        named = queries.get(name)
        key = [k.variable for k in named.page]
        whole = kg.answer.answer(store, named, params, Resolver(store), analytics=False, limit=100_000).page
        expected = [[row[whole.variables.index(k)] for k in key] for row in whole]
        tables = kg.answer.answer(store, named, params, Resolver(store), analytics=True)
        assert tables.source == "duckdb", name
        assert [[row[tables.page.variables.index(k)] for k in key] for row in tables.page] == expected, name
        written = io.BytesIO()
        answered = kg.answer.answer(store, named, params, Resolver(store), analytics=True)
        assert answered.write is not None and answered.write("jsonl", written) == len(expected)
        lines = [json.loads(line) for line in written.getvalue().splitlines()]
        assert [[line.get(k) for k in key] for line in lines] == [
            [python_value(v) for v in row] for row in expected], name
        pages: list[list[Any]] = []
        after = None
        while True:  # five rows at a time, each page from its cursor
            page = kg.answer.answer(store, named, params, Resolver(store), analytics=True, limit=5, after=after).page
            pages += [[row[page.variables.index(k)] for k in key] for row in page]
            if page.next is None:
                break
            after = page.next
        assert pages == expected, name


def test_a_tail_past_its_limit_is_merged_into_its_table_in_order(analysed_store: Any, db_of: Any, tmp_path: Path,
                                                                 monkeypatch: Any) -> None:
    from kg.analytics import stored

    store = analysed_store
    db = db_of(Path(store.location))
    monkeypatch.setattr(stored, "TAIL_MOST", 1)
    set_status(store, resolve_paper(store, "GPipe"), "read", at=at(1))
    set_status(store, resolve_paper(store, "Ring Attention"), "read", at=at(1))
    build(store, db)
    set_status(store, resolve_paper(store, "GPipe"), "to-read", at=at(2))  # one row: a tail
    build(store, db)
    assert "reading-queue" in tails(db)
    set_status(store, resolve_paper(store, "Ring Attention"), "to-read", at=at(3))  # two: past the limit
    build(store, db)
    assert "reading-queue" not in tails(db)
    assert_as_a_full_build(store, db, tmp_path, "full")
