"""``kg analytics`` end to end, through the real console script."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any


def test_an_analysis_builds_a_missing_file_first_and_says_so(
    kg_cli: Any, analysed_store_path: Path, db_of: Any
) -> None:
    db = db_of(analysed_store_path)
    db.unlink()
    out = kg_cli(
        "analytics",
        "progress",
        "--json",
        "--as-of",
        "2026-12-01",
        store=analysed_store_path,
        check=True,
    )
    assert f"built {db}" in out.stderr.replace("\n", "")
    report = json.loads(out.stdout)
    assert set(report) == {"categories", "timeline", "backlog", "time_to_read"}
    assert report["timeline"][-1]["cumulative"] >= 4
    again = kg_cli("analytics", "build", "--json", store=analysed_store_path, check=True)
    assert json.loads(again.stdout)["mode"] == "up to date"


def test_build_reports_what_it_made_again(kg_cli: Any, analysed_store_path: Path) -> None:
    # (KG_KEEP_FACTS=0: the write leaves the tables stale, for the build to bring up to date)
    kg_cli("reading", "set", "GPipe", "skipped", store=analysed_store_path, check=True, env={"KG_KEEP_FACTS": "0"})
    out = json.loads(
        kg_cli("analytics", "build", "--json", store=analysed_store_path, check=True).stdout
    )
    assert out["mode"] == "incremental" and out["changed_graphs"] == ["reading"]
    assert set(out["rebuilt"]) == {"reading_events"}
    assert set(out["patched_tables"]) == {"reading_state", "suggest_reading"}
    assert out["answers"] == {} and {"bibliography", "reading-queue"} <= set(out["patched"])
    kg_cli("reading", "set", "GPipe", "to-read", store=analysed_store_path, check=True, env={"KG_KEEP_FACTS": "0"})
    text = kg_cli("analytics", "build", store=analysed_store_path, env={"COLUMNS": "200"}, check=True).stdout
    assert "answers made       none" in text and "answers patched    lineage-paper-links" in text
    full = json.loads(
        kg_cli(
            "analytics", "build", "--full", "--json", store=analysed_store_path, check=True
        ).stdout
    )
    assert full["mode"] == "full" and len(full["rebuilt"]) == len(full["tables"])


def test_a_corrupt_file_is_rebuilt_with_a_message(
    kg_cli: Any, analysed_store_path: Path, db_of: Any
) -> None:
    db_of(analysed_store_path).write_bytes(b"\x00not duckdb\x00" * 64)
    out = kg_cli("analytics", "lineage", "--json", store=analysed_store_path, check=True)
    assert "rebuilding it from the graph" in out.stderr.replace("\n", " ")
    assert json.loads(out.stdout)["summary"][0]["edges"] > 50


def test_sql_is_read_only_and_shows_duckdbs_message(
    kg_cli: Any, analysed_store_path: Path, db_of: Any
) -> None:
    from kg.analytics import connect

    con = connect(db_of(analysed_store_path), read_only=True)
    papers = con.execute("SELECT count(*) FROM papers").fetchall()[0][0]
    con.close()
    dropped = kg_cli("analytics", "sql", "DROP TABLE papers", store=analysed_store_path)
    assert (
        dropped.returncode == 1
        and "read-only" in dropped.stderr
        and "Traceback" not in dropped.stderr
    )
    typo = kg_cli("analytics", "sql", "SELEC 1", store=analysed_store_path)
    assert (
        typo.returncode == 1
        and "Parser Error" in typo.stderr
        and 'syntax error at or near "SELEC"' in typo.stderr
    )
    again = kg_cli(
        "analytics",
        "sql",
        "SELECT count(*) AS n FROM papers",
        "--json",
        store=analysed_store_path,
        check=True,
    )
    assert json.loads(again.stdout) == [{"n": papers}]
    as_json = kg_cli(
        "analytics", "sql", "SELECT nope FROM papers", "--json", store=analysed_store_path
    )
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["ok"] is False


def test_export_writes_every_table_as_parquet(
    kg_cli: Any, analysed_store_path: Path, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    folder = tmp_path / "parquet"
    out = json.loads(
        kg_cli(
            "analytics",
            "export",
            "--parquet",
            str(folder),
            "--json",
            store=analysed_store_path,
            check=True,
        ).stdout
    )
    assert {"papers", "authorship", "materialisations", "builds", "graphs"} <= set(out["tables"])
    for name, count in out["tables"].items():
        table = pq.read_table(folder / f"{name}.parquet")
        assert table.num_rows == count, name
    assert pq.read_schema(folder / "papers.parquet").field("year").type == "int32"
    refused = kg_cli("analytics", "export", "--parquet", str(folder), store=analysed_store_path)
    assert refused.returncode == 1 and "--force" in refused.stderr
    kg_cli(
        "analytics",
        "export",
        "--parquet",
        str(folder),
        "--force",
        store=analysed_store_path,
        check=True,
    )
    assert not list(folder.glob(".*partial"))


def test_parquet_leaves_the_reading_state_out_unless_asked_like_every_export(
    kg_cli: Any, analysed_store_path: Path, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    from kg.analytics.sql import PRIVATE_TABLES

    public = tmp_path / "public"
    out = json.loads(kg_cli("analytics", "export", "--parquet", str(public), "-f", "json",
                            store=analysed_store_path, check=True).stdout)
    assert out["left_out"] == list(PRIVATE_TABLES) and not set(PRIVATE_TABLES) & set(out["tables"])
    reading = {"status", "previous_status", "listed_status", "has_note", "read", "read_at", "added_at"}
    for file in public.glob("*.parquet"):
        assert not reading & set(pq.read_schema(file).names), file.name  # no reading state in another table
    private = tmp_path / "private"
    out = json.loads(kg_cli("analytics", "export", "--parquet", str(private), "--include-private", "-f", "json",
                            store=analysed_store_path, check=True).stdout)
    assert set(PRIVATE_TABLES) <= set(out["tables"]) and out["tables"]["reading_state"] > 0
    assert pq.read_table(private / "reading_state.parquet").num_rows == out["tables"]["reading_state"]


def test_charts_and_tables_from_the_command_line(
    kg_cli: Any, analysed_store_path: Path, tmp_path: Path
) -> None:
    chart = tmp_path / "papers.svg"
    out = kg_cli(
        "analytics", "papers", "--chart", str(chart), store=analysed_store_path, check=True
    )
    assert "Papers per year" in out.stdout and chart.read_text().lstrip().startswith("<?xml")
    bad = kg_cli(
        "analytics", "kernels", "--chart", str(tmp_path / "k.jpg"), store=analysed_store_path
    )
    assert bad.returncode == 1 and ".png or .svg" in bad.stderr.replace("\n", " ")
    rows = list(
        csv.DictReader(
            io.StringIO(
                kg_cli(
                    "analytics",
                    "kernels",
                    "--csv",
                    "--section",
                    "techniques",
                    store=analysed_store_path,
                    check=True,
                ).stdout
            )
        )
    )
    assert len(rows) == 39 and {r["status"] for r in rows} >= {
        "verified",
        "failing",
        "none",
        "not run",
    }


def test_a_store_held_by_a_writer_still_answers_analytics(kg_cli: Any, analysed_store_path: Path) -> None:
    from kg.store.embedded import OxigraphStore

    holder = OxigraphStore(analysed_store_path, command="kg sync zotero")
    try:
        out = kg_cli("analytics", "authors", "--json", store=analysed_store_path)
    finally:
        holder.close()
    assert out.returncode == 0, out.stderr
    assert "in use" not in out.stderr
    assert json.loads(out.stdout)["authors"]


def test_an_empty_analysis_says_why_and_what_to_run(kg_cli: Any, built_store_path: Path) -> None:
    adoption = kg_cli("analytics", "adoption", store=built_store_path, env={"COLUMNS": "80"}, check=True).stdout
    assert "kg analytics adoption: nothing to show yet." in adoption
    assert adoption.count("run kg ingest github first") == 1 and "───" not in adoption  # no empty tables
    authors = kg_cli("analytics", "authors", store=built_store_path, env={"COLUMNS": "80"}, check=True).stdout
    assert "Most prolific authors" in authors and "Deepak Narayanan" in authors  # the catalog's first authors
    assert "No author has a recorded affiliation" in " ".join(authors.split())
    one = kg_cli("analytics", "adoption", "--section", "stale", store=built_store_path, check=True).stdout
    assert "Stale repositories: nothing to show yet." in one and "kg ingest github" in one
    data = json.loads(kg_cli("analytics", "adoption", "-f", "json", store=built_store_path, check=True).stdout)
    assert data["repositories"] == []  # JSON stays the rows
