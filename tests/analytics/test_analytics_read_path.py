"""What answering from the analytics tables costs before the first row: a reader imports
neither the builder (staging keys, table SQL, the catalog) nor DuckDB's Python layer, and
knows the file's layout is its own from the code digest the build stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Modules a reader of fresh tables has no use for: the build machinery and what it imports.
BUILDER = ("kg.analytics.materialize", "kg.analytics.staging", "kg.analytics.tables", "kg.catalog", "duckdb")

_PROBE = """
import json, sys
from kg.cli import main
sys.argv = ["kg", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def _query(store: Path, *args: str) -> tuple[str, str, list[str]]:
    """Run kg query as a fresh process would: its stdout, its stderr and the modules it imported."""
    env = {**os.environ, "KG_STORE": str(store), "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-c", _PROBE, "query", *args], capture_output=True, text=True, env=env,
                          timeout=300, check=True)
    err, _, modules = proc.stderr.rpartition("\nMODULES ")
    return proc.stdout, err, json.loads(modules)


@pytest.mark.parametrize("args", [("read-without-note",), ("reading-queue-lineage", "-p", "technique=ZeRO"),
                                  ("bibliography", "--limit", "5")], ids=lambda a: a[0])
def test_a_query_from_fresh_tables_imports_no_build_machinery(analysed_store_path: Path, args: tuple[str, ...]) -> None:
    out, err, modules = _query(analysed_store_path, *args, "-f", "jsonl")
    assert "answered from the DuckDB analytics tables" in err
    assert out.strip(), "no rows"
    assert [m for m in modules if m in BUILDER] == []


def _meta(db: Path, **values: str) -> None:
    import duckdb

    con = duckdb.connect(str(db))
    try:
        for key, value in values.items():
            con.execute("UPDATE staging.meta SET value = ? WHERE key = ?", [value, key])
    finally:
        con.close()


def test_the_build_stores_the_digest_of_the_code_that_made_the_file(analysed_db: Path) -> None:
    import duckdb

    from kg.analytics.files import code_digest

    con = duckdb.connect(str(analysed_db), read_only=True)
    try:
        stored = dict(con.execute("SELECT key, value FROM staging.meta").fetchall())
    finally:
        con.close()
    assert stored["code_digest"] == code_digest()


def test_a_file_from_other_code_of_the_same_schema_answers_and_one_of_another_schema_does_not(
        analysed_store_path: Path) -> None:
    db = analysed_store_path.with_name("store.analytics.duckdb")
    _meta(db, code_digest="0" * 16)  # the same SQL from other code (an edited comment): still this schema
    out, err, modules = _query(analysed_store_path, "read-without-note", "-f", "csv")
    assert "answered from the DuckDB analytics tables" in err
    assert "kg.analytics.tables" in modules  # worked the schema version out (kg.analytics.schema)
    _meta(db, schema_version="0" * 16)
    stale_out, stale_err, _ = _query(analysed_store_path, "read-without-note", "-f", "csv")
    assert "made by another version" in stale_err
    assert sorted(stale_out.splitlines()) == sorted(out.splitlines())


def test_the_code_digest_changes_with_the_source_of_the_table_sql(tmp_path: Path, monkeypatch) -> None:
    """A copy of the package whose tables.py differs by one character has another digest."""
    import shutil

    import kg
    from kg.analytics import files

    package = Path(kg.__file__).parent
    copy = tmp_path / "kg"
    shutil.copytree(package / "analytics", copy / "analytics", ignore=shutil.ignore_patterns("__pycache__"))
    for name in files._SQL_SOURCES:
        shutil.copy(package / name, copy / name)
    monkeypatch.setattr(files, "__file__", str(copy / "analytics" / "files.py"))
    files.code_digest.cache_clear()
    try:
        same = files.code_digest()
        (copy / "analytics" / "tables.py").write_text((copy / "analytics" / "tables.py").read_text() + " ")
        files.code_digest.cache_clear()
        other = files.code_digest()
    finally:
        monkeypatch.undo()
        files.code_digest.cache_clear()
    assert same == files.code_digest()
    assert other != same


# -- answering without opening the store (kg.analytics.memo) ---------------------------

RQL = ("reading-queue-lineage", "-p", "technique=ZeRO", "-f", "jsonl")


def test_once_the_tables_answered_the_next_query_needs_no_store_until_a_write(analysed_store_path: Path) -> None:
    from kg.reading import resolve_paper, set_status
    from kg.store.embedded import OxigraphStore

    first, err, modules = _query(analysed_store_path, *RQL)
    assert "answered from the DuckDB analytics tables" in err and "kg.store.embedded" in modules
    again, err, modules = _query(analysed_store_path, *RQL)
    assert "answered from the DuckDB analytics tables" in err
    assert "kg.store.embedded" not in modules and "kg.resolve" not in modules  # no store opened, ZeRO remembered
    assert again == first and first.strip()
    other, err, modules = _query(analysed_store_path, "reading-queue-lineage", "-p", "technique=GQA", "-f", "jsonl")
    assert "kg.store.embedded" in modules  # a name not met yet: the store resolves it
    with OxigraphStore(analysed_store_path) as store:
        set_status(store, resolve_paper(store, "GPipe"), "reading")
    stale, err, modules = _query(analysed_store_path, *RQL)
    assert "answered by SPARQL" in err and "stale" in err and "kg.store.embedded" in modules
    assert sorted(stale.splitlines()) != sorted(first.splitlines()) or "GPipe" not in first


def test_a_rebuilt_analytics_file_is_not_taken_for_the_one_the_memo_saw(analysed_store_path: Path) -> None:
    from kg.analytics import build
    from kg.store.embedded import OxigraphStore

    _query(analysed_store_path, *RQL)
    db = analysed_store_path.with_name("store.analytics.duckdb")
    with OxigraphStore(analysed_store_path) as store:
        build(store, db, full=True)
    _out, err, modules = _query(analysed_store_path, *RQL)
    assert "answered from the DuckDB analytics tables" in err and "kg.store.embedded" in modules
