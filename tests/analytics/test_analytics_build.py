"""Materialising the graph: typed tables, provenance per row, incremental rebuilds, and a
file that is never left half-written."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pytest

from kg.analytics import build, connect
from kg.analytics.tables import TABLES


def rows(db: Path, query: str) -> list[tuple[Any, ...]]:
    con = connect(db, read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_every_table_is_built_with_typed_columns(analysed_db: Path) -> None:
    tables = {
        r[0]
        for r in rows(
            analysed_db, "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
        )
    }
    assert {t.name for t in TABLES} | {"graphs", "materialisations", "builds"} == tables
    types = dict(
        rows(
            analysed_db,
            """SELECT table_name || '.' || column_name, data_type FROM duckdb_columns()
                                      WHERE schema_name = 'main'""",
        )
    )
    assert types["papers.year"] == "INTEGER"
    assert types["repository_snapshots.taken_at"] == "TIMESTAMP"
    assert types["repository_snapshots.stars"] == "BIGINT"
    assert types["reading_events.changed_at"] == "TIMESTAMP"
    assert types["techniques.on_page"] == "BOOLEAN"
    assert types["authorship.position"] == "INTEGER"
    assert types["verification_checks.max_abs_error"] == "DOUBLE"
    assert types["materialisations.sources"] == "VARCHAR[]"


def test_every_row_names_its_source_graph_and_when_it_changed(analysed_db: Path) -> None:
    graphs = {r[0] for r in rows(analysed_db, "SELECT graph FROM graphs")}
    assert {"catalog", "reading-list", "reading", "bench", "kernels"} <= graphs
    for table in TABLES:
        missing = rows(
            analysed_db,
            f"SELECT count(*) FROM {table.name} "
            "WHERE source_graph IS NULL OR source_modified IS NULL",
        )
        assert missing[0][0] == 0, table.name
        named = {
            g
            for r in rows(analysed_db, f"SELECT DISTINCT source_graph FROM {table.name}")
            for g in r[0].split(", ")
        }
        assert named <= graphs, table.name
    assert rows(analysed_db, "SELECT DISTINCT source_graph FROM citations") == [("bench",)]
    assert rows(analysed_db, "SELECT DISTINCT source_graph FROM verification_runs") == [
        ("kernels",)
    ]


def test_the_record_says_what_each_table_was_built_from(analysed_db: Path) -> None:
    sources = dict(rows(analysed_db, "SELECT table_name, sources FROM materialisations"))
    assert set(sources) == {t.name for t in TABLES}
    assert sources["citations"] == ["bench"]
    assert sources["reading_events"] == ["reading"]
    assert "kernels" in sources["kernels"] and "reading" not in sources["kernels"]
    assert {"bench", "catalog"} <= set(sources["papers"])
    builds = rows(analysed_db, "SELECT mode, rebuilt_tables, staged_facts FROM builds")
    assert len(builds) == 1 and builds[0][0] == "full" and builds[0][2] > 4000
    assert len(builds[0][1]) == len(TABLES)


def test_nothing_is_rebuilt_when_the_graph_is_unchanged(analysed_store: Any, db_of: Any) -> None:
    db = db_of(Path(analysed_store.location))
    report = build(analysed_store, db)
    assert report.mode == "up to date" and report.rebuilt == {} and report.staged_facts == 0
    assert rows(db, "SELECT count(*) FROM builds") == [(1,)]


def test_a_paper_taken_off_the_reading_state_is_an_event_with_no_status(analysed_store: Any, db_of: Any) -> None:
    from kg.reading import resolve_paper, status_removal
    from kg.store.base import Activity

    db = db_of(Path(analysed_store.location))
    paper = resolve_paper(analysed_store, "Ring Attention")
    with analysed_store.transaction(Activity("zotero sync (test)")) as tx:
        status_removal(tx, paper, previous="to-read", via="zotero", at=dt.datetime(2026, 5, 6, tzinfo=dt.UTC))
    build(analysed_store, db)
    assert rows(db, f"""SELECT status, previous_status, via, removed, changed_at FROM reading_events
                        WHERE paper = '{paper.value}' AND removed""") == [
        (None, "to-read", "zotero", True, dt.datetime(2026, 5, 6))]
    assert rows(db, f"SELECT count(*) FROM reading_state WHERE paper = '{paper.value}'") == [(0,)]
    assert rows(db, "SELECT count(*) FROM reading_events WHERE NOT removed AND status IS NULL") == [(0,)]


def test_a_list_replacement_is_one_removal_row_per_paper_it_took_off(analysed_store: Any, db_of: Any,
                                                                      tmp_path: Path) -> None:
    from kg.catalog import load_catalog
    from kg.reading import current_statuses, import_reading_list

    db = db_of(Path(analysed_store.location))
    before = current_statuses(analysed_store)
    short = tmp_path / "short.md"
    short.write_text("Mine\n\nAttention\n\nStatus\tPaper\tVenue\tWhy It Matters\tLinks\n"
                     "⬜\tRing Attention with Blockwise Transformers for Near-Infinite Context\tICLR'24\tlong\tPaper\n",
                     encoding="utf-8")
    report = import_reading_list(analysed_store, short, load_catalog())
    build(analysed_store, db)
    gone = rows(db, "SELECT paper, previous_status, via FROM reading_events WHERE removed ORDER BY paper")
    assert len(gone) == len(report.removed) > 40
    assert all(via == "reading-list" and previous == before[paper][0] for paper, previous, via in gone)
    # one event per status the papers had, shared by its papers
    assert rows(db, "SELECT count(DISTINCT event) FROM reading_events WHERE removed") == [
        (len({previous for _p, previous, _v in gone}),)]
    assert rows(db, "SELECT count(*) FROM reading_events WHERE paper IS NULL") == [(0,)]


def test_a_status_change_rebuilds_only_the_reading_tables(analysed_store: Any, db_of: Any) -> None:
    from kg.reading import resolve_paper, set_status

    db = db_of(Path(analysed_store.location))
    before = dict(rows(db, "SELECT table_name, build_id FROM materialisations"))
    set_status(
        analysed_store,
        resolve_paper(analysed_store, "Ring Attention"),
        "read",
        at=dt.datetime(2026, 4, 5, tzinfo=dt.UTC),
    )
    report = build(analysed_store, db)
    assert report.mode == "incremental" and report.changed_graphs == ["reading"]
    # (and what kg suggest reading knows of the list): the events made again, the rest patched
    assert set(report.rebuilt) == {"reading_events"}
    assert set(report.patched_tables) == {"reading_state", "suggest_reading"}
    after = dict(rows(db, "SELECT table_name, build_id FROM materialisations"))
    assert {t for t in after if after[t] != before[t]} == {"reading_events", "reading_state", "suggest_reading"}
    assert rows(
        db, "SELECT count(*) FROM reading_state WHERE read_at = TIMESTAMP '2026-04-05'"
    ) == [(1,)]
    assert rows(db, "SELECT mode, changed_graphs FROM builds WHERE build_id = 2") == [
        ("incremental", ["reading"])
    ]


def test_a_new_snapshot_rebuilds_the_repository_tables_and_growth(
    analysed_store: Any, db_of: Any
) -> None:
    from pyoxigraph import NamedNode, Triple

    from kg.graphs import GITHUB
    from kg.store.base import Activity
    from kg.vocab import PROV, RDF, TKG, datetime_literal, integer

    db = db_of(Path(analysed_store.location))
    repo = rows(
        db,
        "SELECT repository FROM repositories WHERE source_graph = 'bench' "
        "ORDER BY repository LIMIT 1",
    )[0][0]
    last = rows(db, f"SELECT max(stars) FROM repository_snapshots WHERE repository = '{repo}'")[0][
        0
    ]
    snap = NamedNode(repo + "/snapshot/github-1")
    with analysed_store.transaction(Activity("kg ingest github")) as tx:
        tx.insert(
            GITHUB,
            [
                Triple(NamedNode(repo), TKG.snapshot, snap),
                Triple(snap, RDF.type, TKG.RepositorySnapshot),
                Triple(
                    snap,
                    PROV.generatedAtTime,
                    datetime_literal(dt.datetime(2026, 11, 1, tzinfo=dt.UTC)),
                ),
                Triple(snap, TKG.stars, integer(last + 1234)),
            ],
        )
    report = build(analysed_store, db)
    assert report.changed_graphs == ["github"]
    assert set(report.rebuilt) == {"repository_snapshots"}
    snaps = rows(
        db,
        f"SELECT source_graph, stars FROM repository_snapshots WHERE repository = '{repo}' "
        "ORDER BY taken_at DESC LIMIT 1",
    )
    assert snaps == [("github", last + 1234)]


def test_a_dropped_graph_takes_its_rows_away(analysed_store: Any, db_of: Any) -> None:
    from kg.graphs import graph_iri

    db = db_of(Path(analysed_store.location))
    with analysed_store.transaction("drop bench") as tx:
        tx.update(f"DROP GRAPH {graph_iri('bench')}", touches=[])
    report = build(analysed_store, db)
    # (made whole, or patched: the rows of the subjects the graph held made again)
    assert "bench" in report.changed_graphs and "citations" in {*report.rebuilt, *report.patched_tables}
    assert rows(db, "SELECT count(*) FROM citations") == [(0,)]
    assert rows(db, "SELECT count(*) FROM papers WHERE source_graph = 'bench'") == [(0,)]
    assert "bench" not in {r[0] for r in rows(db, "SELECT graph FROM graphs")}


def test_a_graph_without_kernels_gives_empty_kernel_tables(
    built_store: Any, tmp_path: Path
) -> None:
    db = tmp_path / "fresh.duckdb"
    report = build(built_store, db)
    assert (
        report.mode == "full"
        and report.tables["kernels"] == 0
        and report.tables["verification_runs"] == 0
    )
    assert report.tables["repository_snapshots"] == 0 and report.tables["techniques"] >= 39
    con = connect(db, read_only=True)
    try:
        from kg.analytics.analyses import run

        coverage = run(con, "kernels").section("coverage").rows
        adoption = run(con, "adoption").section("most_active").rows
    finally:
        con.close()
    assert sum(r["not run"] for r in coverage) == 39 and adoption == []


def test_a_corrupt_file_is_rebuilt_with_a_message(built_store: Any, tmp_path: Path) -> None:
    db = tmp_path / "broken.duckdb"
    db.write_bytes(b"this is not a DuckDB database" * 100)
    report = build(built_store, db)
    assert report.mode == "full" and report.reason == "corrupt"
    assert "rebuilding it from the graph" in report.message and str(db) in report.message
    assert rows(db, "SELECT count(*) FROM techniques")[0][0] >= 39


def test_a_failed_build_leaves_the_file_as_it_was(
    analysed_store: Any, db_of: Any, monkeypatch: Any
) -> None:
    from kg.analytics import materialize
    from kg.errors import AnalyticsError
    from kg.reading import resolve_paper, set_status

    db = db_of(Path(analysed_store.location))
    before = rows(db, "SELECT count(*), max(changed_at) FROM reading_events")
    set_status(analysed_store, resolve_paper(analysed_store, "GPipe"), "skipped")
    broken = [
        t
        if t.name != "reading_state"
        else type(t)(t.name, t.description, t.sql + " LIMIT nonsense", t.after)
        for t in TABLES
    ]
    monkeypatch.setattr(materialize, "TABLES", tuple(broken))
    monkeypatch.setattr(
        materialize, "ordered", lambda names: [t for t in broken if t.name in names]
    )
    with pytest.raises(AnalyticsError, match="is unchanged|failed"):
        build(analysed_store, db)
    assert rows(db, "SELECT count(*), max(changed_at) FROM reading_events") == before
    assert rows(db, "SELECT count(*) FROM builds") == [(1,)]
    monkeypatch.undo()
    report = build(analysed_store, db)
    assert report.rebuilt.keys() | report.patched_tables.keys() >= {"reading_events", "reading_state"}


def test_a_store_without_a_streaming_path_gives_the_same_tables(
    analysed_store_dir: Path, analysed_db: Path, tmp_path: Path
) -> None:
    """The generic path of the store interface (Python rows serialised as CSV), which a
    remote endpoint uses, stages exactly the same facts as the embedded store's stream."""
    from kg.store.base import GraphStore
    from kg.store.embedded import OxigraphStore

    class Generic(OxigraphStore):
        select_to_file = GraphStore.select_to_file

    path = tmp_path / "store"
    shutil.copytree(analysed_store_dir, path)
    store = Generic(path)
    try:
        report = build(store, tmp_path / "generic.duckdb")
    finally:
        store.close()
    expected = dict(rows(analysed_db, "SELECT table_name, rows FROM materialisations"))
    assert report.tables == expected
    query = "SELECT md5(string_agg(title, '|' ORDER BY paper)) FROM papers"
    assert rows(tmp_path / "generic.duckdb", query) == rows(analysed_db, query)


def test_the_file_lives_beside_an_embedded_store(tmp_path: Path, monkeypatch: Any) -> None:
    from kg.analytics import database_path

    assert (
        database_path(str(tmp_path / "kg" / "store")) == tmp_path / "kg" / "store.analytics.duckdb"
    )
    remote = database_path("http://127.0.0.1:7878/query")
    assert remote.parent.name == "analytics" and remote.suffix == ".duckdb"
    # The --store value with its options, and the store's location, name the same file;
    # a password in the URL never reaches the file name.
    assert database_path("http://127.0.0.1:7878/query;update=/update;gsp=/store") == remote
    secret = database_path("http://reader:s3cret-pw@127.0.0.1:7878/query;union=false")
    assert secret == database_path("http://reader:***@127.0.0.1:7878/query") and "s3cret" not in str(secret)
    monkeypatch.setenv("KG_ANALYTICS_DB", str(tmp_path / "mine.duckdb"))
    assert database_path(str(tmp_path / "kg" / "store")) == tmp_path / "mine.duckdb"


def test_awkward_text_and_long_author_lists_come_through_intact(
    analysed_store: Any, db_of: Any
) -> None:
    from pyoxigraph import NamedNode, Triple

    from kg.graphs import ARXIV
    from kg.store.base import Activity
    from kg.vocab import BIBO, DCTERMS, FOAF, RDF, text

    db = db_of(Path(analysed_store.location))
    title = 'Commas, "quotes", a\nline break, tabs\tand 中文 ✓'
    paper, seq = (
        NamedNode("https://arxiv.org/abs/2601.00001"),
        NamedNode("https://arxiv.org/abs/2601.00001#authors"),
    )
    triples = [
        Triple(paper, RDF.type, BIBO.Document),
        Triple(paper, DCTERMS.title, text(title, None)),
        Triple(paper, BIBO.authorList, seq),
    ]
    for n in range(1, 13):
        person = NamedNode(f"https://w3id.org/techkg/id/person/test-author-{n}")
        triples += [
            Triple(seq, RDF[f"_{n}"], person),
            Triple(person, RDF.type, FOAF.Person),
            Triple(person, FOAF.name, text(f"Author, number {n}", None)),
        ]
    with analysed_store.transaction(Activity("kg ingest arxiv")) as tx:
        tx.replace_graph(ARXIV, triples)
    report = build(analysed_store, db)
    assert {"papers", "authorship", "authors"} <= {*report.rebuilt, *report.patched_tables}
    assert rows(db, f"SELECT title, source_graph FROM papers WHERE paper = '{paper.value}'") == [
        (title, "arxiv")
    ]
    listed = rows(
        db,
        f"""SELECT a.position, p.name, a.first_author FROM authorship AS a
            JOIN authors AS p USING (person)
            WHERE a.paper = '{paper.value}' ORDER BY a.position""",
    )
    assert [r[0] for r in listed] == list(range(1, 13))
    assert listed[0][1:] == ("Author, number 1", True) and not any(r[2] for r in listed[1:])


def test_a_failed_full_build_leaves_the_previous_file_in_place(analysed_store: Any, db_of: Any) -> None:
    db = db_of(Path(analysed_store.location))
    before = rows(db, "SELECT count(*) FROM papers"), rows(db, "SELECT count(*) FROM builds")

    def interrupted(phase: str, done: int, total: int) -> None:
        if phase == "tables" and done == 2:
            raise KeyboardInterrupt  # as a user's Ctrl-C halfway through the tables

    with pytest.raises(KeyboardInterrupt):
        build(analysed_store, db, full=True, progress=interrupted)
    assert (rows(db, "SELECT count(*) FROM papers"), rows(db, "SELECT count(*) FROM builds")) == before
    assert not db.with_name(db.name + ".building").exists()
    report = build(analysed_store, db, full=True)
    assert report.mode == "full" and rows(db, "SELECT count(*) FROM builds") == [(1,)]
    assert not db.with_name(db.name + ".building").exists()
