"""The analytics tables kept current by the write (kg.derived, kg.analytics.keeper): after
``kg reading set``, ``kg suggest accept`` and an import, tables that were fresh are fresh
still, the named queries are answered from them, and their answers equal SPARQL's; a
command killed while it patches them leaves them as they were (then stale) or patched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kg.answer
import kg.reading
import queries
from kg.analytics.answers import freshness
from kg.store.embedded import OxigraphStore
from tests.store.processes import kill_at

QUERIES = ("reading-queue", "read-without-note", "bibliography", "lineage-papers")


def db_beside(store: Path) -> Path:
    return store.with_name(store.name + ".analytics.duckdb")


def assert_fresh_and_equal_to_sparql(store_path: Path) -> None:
    """Fresh tables, and each query's first rows from them equal to SPARQL's."""
    with OxigraphStore.open_reader(store_path) as store:
        con, why = freshness(store, db_beside(store_path))
        assert con is not None, why
        con.close()
        for name in QUERIES:
            named = queries.get(name)
            tables = kg.answer.answer(store, named, limit=50, analytics=True)
            sparql = kg.answer.answer(store, named, limit=50, analytics=False)
            assert tables.source == "duckdb", (name, tables.note)
            assert list(tables.page) == list(sparql.page), name


def test_kg_reading_set_keeps_fresh_tables_fresh(kg_cli: Any, analysed_store_path: Path) -> None:
    assert_fresh_and_equal_to_sparql(analysed_store_path)
    done = kg_cli("reading", "set", "GPipe", "read", store=analysed_store_path, check=True)
    assert "stale" not in done.stderr
    assert_fresh_and_equal_to_sparql(analysed_store_path)
    page = kg_cli("query", "reading-queue", "--limit", "5", "-f", "csv", store=analysed_store_path, check=True)
    assert "answered from the DuckDB analytics tables (fresh)" in page.stderr
    kg_cli("reading", "set", "GPipe", "to-read", store=analysed_store_path, check=True)
    listed = kg_cli("reading", "list", "--status", "to-read", "-f", "json", store=analysed_store_path, check=True)
    assert "GPipe" in listed.stdout
    assert_fresh_and_equal_to_sparql(analysed_store_path)


def test_a_status_change_keeps_the_tables_fresh_without_importing_arrow_or_numpy(analysed_store_path: Path) -> None:
    """kg reading set, run as the console script runs it, brings the tables up to date
    with DuckDB alone: pyarrow and numpy cost a tenth of a second to import."""
    import os
    import subprocess
    import sys

    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('HEAVY', [m for m in ('pyarrow', 'numpy') if m in sys.modules], "
            "file=sys.stderr))\n"
            "from kg.cli import main\n"
            "sys.argv = ['kg', 'reading', 'set', 'GPipe', 'read']\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "KG_STORE": str(analysed_store_path)})
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr and "stale" not in done.stderr
    assert_fresh_and_equal_to_sparql(analysed_store_path)


def test_accepting_a_suggestion_keeps_fresh_tables_fresh(analysed_store_path: Path) -> None:
    """kg suggest accept's write (kg.decisions.accept) watched as the CLI watches it."""
    from dataclasses import dataclass, field

    from kg import derived
    from kg.analytics.keeper import TablesKeeper
    from kg.decisions import accept
    from kg.resolve import resolve_technique

    @dataclass(frozen=True)
    class Technique:
        iri: str
        name: str
        id: str

    @dataclass(frozen=True)
    class Suggestion:
        id: str
        child: Technique
        parent: Technique
        relation: str = "buildsOn"
        score: float = 0.9
        evidence: tuple[Any, ...] = field(default_factory=tuple)

    notes: list[str] = []
    store = OxigraphStore(analysed_store_path)
    try:
        child, parent = (resolve_technique(store, name) for name in ("ZeRO", "Megatron-LM"))
        watch = derived.watch(store, [TablesKeeper()])
        assert watch.tokens[0][1] is not None  # fresh before
        accept(store, Suggestion("s-test", Technique(child.value, "ZeRO", "zero"),
                                 Technique(parent.value, "Megatron-LM", "megatron-lm")))
        assert watch.changes.decisions == {(child.value, parent.value)}
        watch.finish(notes.append)
    finally:
        store.close()
    assert notes == []
    assert_fresh_and_equal_to_sparql(analysed_store_path)


def test_a_small_import_keeps_fresh_tables_fresh(kg_cli: Any, analysed_store_path: Path, tmp_path: Path) -> None:
    with OxigraphStore.open_reader(analysed_store_path) as store:
        paper = kg.reading.resolve_paper(store, "GPipe")
    extra = tmp_path / "doi.nt"
    extra.write_text(f'{paper} <http://purl.org/ontology/bibo/doi> "10.9999/kg-kept" .\n', encoding="utf-8")
    done = kg_cli("import", "rdf", str(extra), "--graph", "dois", "--no-link", store=analysed_store_path, check=True)
    assert "stale" not in done.stderr
    assert_fresh_and_equal_to_sparql(analysed_store_path)


def test_a_big_write_says_the_tables_are_stale_and_what_to_run(kg_cli: Any, analysed_store_path: Path) -> None:
    done = kg_cli("reading", "set", "GPipe", "read", store=analysed_store_path, check=True,
                  env={"KG_KEEP_FACTS": "0"})
    assert "the analytics tables are stale now (reading changed" in " ".join(done.stderr.split())
    assert "kg analytics build brings them up to date" in " ".join(done.stderr.split())


def test_tables_stale_before_the_write_are_left_to_the_next_build(kg_cli: Any, analysed_store_path: Path) -> None:
    kg_cli("reading", "set", "GPipe", "read", store=analysed_store_path, check=True,
           env={"KG_KEEP_FACTS": "0"})  # stale now
    kg_cli("reading", "set", "ZeRO", "read", store=analysed_store_path, check=True)
    with OxigraphStore.open_reader(analysed_store_path) as store:
        con, why = freshness(store, db_beside(analysed_store_path))
        assert con is None and "stale" in why


def test_a_command_killed_while_it_patches_the_tables_leaves_them_as_they_were(
        kg_cli: Any, analysed_store_path: Path) -> None:
    from tests.analytics.test_analytics_status_patch import answer_tables, tables

    db = db_beside(analysed_store_path)
    before_answers, before_tables = answer_tables(db), tables(db)
    said = kill_at("analytics-patch", "reading", "set", "GPipe", "read", store=analysed_store_path)
    assert "KG_PAUSED analytics-patch" in said
    # the status change stands; the tables are as they were, so stale (never half patched)
    assert answer_tables(db) == before_answers and tables(db) == before_tables
    with OxigraphStore.open_reader(analysed_store_path) as store:
        con, why = freshness(store, db)
        assert con is None and "stale" in why
        named = queries.get("reading-queue")
        assert kg.answer.answer(store, named, limit=20, analytics=True).source == "sparql"
    # the next build brings them up to date: equal to SPARQL again
    kg_cli("analytics", "build", store=analysed_store_path, check=True)
    assert_fresh_and_equal_to_sparql(analysed_store_path)


def test_at_scale_a_query_brings_stale_tables_up_to_date_and_says_so(kg_cli: Any, analysed_store_path: Path) -> None:
    kg_cli("reading", "set", "GPipe", "read", store=analysed_store_path, check=True,
           env={"KG_KEEP_FACTS": "0"})  # stale now
    big = {"KG_AUTO_BUILD": "1"}  # this small store counted as arXiv scale
    page = kg_cli("query", "reading-queue", "--limit", "5", "-f", "csv", store=analysed_store_path, check=True,
                  env=big)
    said = " ".join(page.stderr.split())
    assert "the analytics tables are stale (reading changed" in said
    assert "bringing them up to date first (kg analytics build)" in said
    assert "answered from the DuckDB analytics tables (fresh)" in said
    assert_fresh_and_equal_to_sparql(analysed_store_path)
    kg_cli("reading", "set", "GPipe", "to-read", store=analysed_store_path, check=True, env={"KG_KEEP_FACTS": "0"})
    listed = kg_cli("reading", "list", "--status", "to-read", "-f", "json", store=analysed_store_path, check=True,
                    env=big)
    assert "bringing them up to date first" in " ".join(listed.stderr.split())
    assert "GPipe" in listed.stdout
    assert_fresh_and_equal_to_sparql(analysed_store_path)


def test_below_scale_or_switched_off_stale_tables_leave_the_answer_to_sparql(kg_cli: Any,
                                                                              analysed_store_path: Path) -> None:
    kg_cli("reading", "set", "GPipe", "read", store=analysed_store_path, check=True, env={"KG_KEEP_FACTS": "0"})
    for env in ({}, {"KG_AUTO_BUILD": "0"}):  # the test store is far below a million triples
        page = kg_cli("query", "reading-queue", "--limit", "5", "-f", "csv", store=analysed_store_path, check=True,
                      env=env)
        said = " ".join(page.stderr.split())
        assert "answered by SPARQL" in said and "bringing them up to date" not in said
    bad = kg_cli("query", "reading-queue", "--limit", "5", store=analysed_store_path, env={"KG_AUTO_BUILD": "many"})
    assert bad.returncode != 0 and "KG_AUTO_BUILD" in bad.stderr and "Traceback" not in bad.stderr
