"""The analyses and their charts, on the analysed test graph."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from kg.analytics.analyses import ANALYSES, QUERIES, run
from kg.errors import AnalyticsError


def test_every_section_has_its_query_and_every_query_a_section() -> None:
    sections = {f"{name}.{s}" for name, (parts, _params) in ANALYSES.items() for s, _title in parts}
    assert sections == set(QUERIES)


def test_progress_counts_each_reading_paper_once_per_section(duckdb_conn: Any) -> None:
    report = run(duckdb_conn, "progress", by="reading", as_of="2026-12-01")
    total = duckdb_conn.execute("SELECT count(*) FROM reading_state").fetchall()[0][0]
    categories = report.section("categories").rows
    assert sum(r["papers"] for r in categories) >= total
    for r in categories:
        assert r["papers"] == r["read"] + r["reading"] + r["to_read"] + r["skipped"] + r["other"]
        assert 0 <= r["read_pct"] <= 100
    by_technique = (
        run(duckdb_conn, "progress", by="technique", as_of="2026-12-01").section("categories").rows
    )
    assert "(no technique)" in {r["category"] for r in by_technique}
    assert {r["category"] for r in by_technique} != {r["category"] for r in categories}


def test_the_timeline_counts_reads_by_week_or_month(duckdb_conn: Any) -> None:
    months = run(duckdb_conn, "progress", period="month").section("timeline").rows
    weeks = run(duckdb_conn, "progress", period="week").section("timeline").rows
    assert (
        sum(r["read"] for r in months) == sum(r["read"] for r in weeks) == months[-1]["cumulative"]
    )
    assert all(r["period"].day == 1 for r in months)
    assert all(r["period"].weekday() == 0 for r in weeks)
    january = next(r for r in months if r["period"] == dt.date(2026, 1, 1))
    assert january["read"] >= 2


def test_time_from_added_to_read_uses_the_dated_status_changes(duckdb_conn: Any) -> None:
    rows = run(duckdb_conn, "progress").section("time_to_read").rows
    overall = rows[-1]
    assert overall["category"] == "(all)"
    # The 8 papers the reading list gives as read were added and read at its import: 0 days,
    # as was the corpus paper the reader marked read over its imported status.
    assert (
        overall["papers"] == 8 + 1 + 1 and overall["max_days"] == 10.0 and overall["median_days"] == 0.0
    )
    per_section = [r for r in rows[:-1] if r["max_days"] == 10.0]
    assert len(per_section) == 1 and per_section[0]["papers"] >= 1


def test_the_backlog_is_what_is_left_to_read(duckdb_conn: Any) -> None:
    backlog = run(duckdb_conn, "progress", as_of="2026-12-01").section("backlog").rows
    open_papers = duckdb_conn.execute(
        "SELECT count(*) FROM reading_state WHERE status IN ('to-read', 'reading')"
    ).fetchall()[0][0]
    assert sum(r["backlog"] for r in backlog) >= open_papers > 0
    assert [r["backlog"] for r in backlog] == sorted((r["backlog"] for r in backlog), reverse=True)


def test_stale_repositories_depend_on_the_date_and_threshold(duckdb_conn: Any) -> None:
    early = (
        run(duckdb_conn, "adoption", as_of="2026-01-01", stale_days=365, top=1000)
        .section("stale")
        .rows
    )
    late = (
        run(duckdb_conn, "adoption", as_of="2027-06-01", stale_days=90, top=1000)
        .section("stale")
        .rows
    )
    assert early == []
    pushed = duckdb_conn.execute(
        "SELECT count(*) FROM repositories WHERE pushed_at IS NOT NULL"
    ).fetchall()[0][0]
    assert len(late) == pushed > 0
    assert all(r["days_since_push"] >= 90 for r in late)


def test_unknown_options_and_sections_are_refused_with_a_hint(duckdb_conn: Any) -> None:
    with pytest.raises(AnalyticsError) as err:
        run(duckdb_conn, "progress", period="fortnight")
    assert "week" in err.value.hint
    with pytest.raises(AnalyticsError) as err:
        run(duckdb_conn, "lineage").section("nope")
    assert "longest_chains" in err.value.hint
    with pytest.raises(AnalyticsError) as err:
        run(duckdb_conn, "adoption", as_of="2026-13-40")
    assert "YYYY-MM-DD" in err.value.hint
    with pytest.raises(AnalyticsError):
        run(duckdb_conn, "horoscope")


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("progress", "Read and to read over time"),
        ("papers", "Papers per year by technique category"),
        ("adoption", "Repository stars over time"),
        ("kernels", "Reference kernel coverage per category"),
    ],
)
def test_charts_are_written_as_png_and_svg(
    duckdb_conn: Any, tmp_path: Path, name: str, title: str
) -> None:
    from kg.analytics.charts import save

    report = run(duckdb_conn, name, as_of="2026-12-01")
    png = save(report, tmp_path / f"{name}.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    svg = save(report, tmp_path / f"{name}.svg")
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert title in svg.read_text()


def test_a_chart_without_data_says_what_is_missing(built_store: Any, tmp_path: Path) -> None:
    from kg.analytics import build, connect
    from kg.analytics.charts import save

    db = tmp_path / "bare.duckdb"
    build(built_store, db)
    con = connect(db, read_only=True)
    try:
        report = run(con, "adoption")
    finally:
        con.close()
    svg = save(report, tmp_path / "adoption.svg").read_text()
    assert "No repository snapshots yet" in svg


def test_a_chart_needs_a_png_or_svg_name(duckdb_conn: Any, tmp_path: Path) -> None:
    from kg.analytics.charts import save

    report = run(duckdb_conn, "kernels")
    with pytest.raises(AnalyticsError) as err:
        save(report, tmp_path / "coverage.gif")
    assert ".png or .svg" in err.value.hint
    with pytest.raises(AnalyticsError):
        save(run(duckdb_conn, "lineage"), tmp_path / "lineage.png")
    assert not list(tmp_path.iterdir())
