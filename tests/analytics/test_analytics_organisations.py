"""Analytics group by the canonical organisation: a unit counts under its organisation."""

from __future__ import annotations

from typing import Any


def test_papers_per_organisation_count_units_under_their_organisation(duckdb_conn: Any) -> None:
    from kg.analytics.analyses import run

    rows = run(duckdb_conn, "papers", top=1000).section("per_organisation").rows
    by_name = {r["organisation"]: r for r in rows}
    assert "DeepSeek-AI" not in by_name and "Google Brain" not in by_name and "Google Research" not in by_name
    assert set(by_name["Google"]["units"].split(", ")) == {"Google Brain", "Google Research"}
    assert by_name["ByteDance"]["units"] == "ByteDance Seed"
