"""kg analytics takes -f like every command (--json and --csv still work), and its tables
fit 80 columns without splitting a header, a number or a word."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest


@pytest.mark.parametrize("width", [80, 100, 160])
def test_lineage_tables_fit_the_terminal_with_whole_headers(kg_cli: Any, analysed_store_path: Path,
                                                            width: int) -> None:
    out = kg_cli("analytics", "lineage", env={"COLUMNS": str(width)}, store=analysed_store_path, check=True).stdout
    lines = out.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines), max(lines, key=len)
    words = set(out.split())
    assert {"techniques", "lineage", "depth", "fan", "out"} <= words
    assert not [w for w in words if w.startswith(("techniqu", "es_in")) and w not in ("techniques", "technique")]
    report = json.loads(kg_cli("analytics", "lineage", "-f", "json", store=analysed_store_path, check=True).stdout)
    glance = report["summary"][0] if "summary" in report else next(iter(report.values()))[0]
    assert str(glance["techniques_in_lineage"]) in words


def test_sql_takes_the_format_flag_and_the_old_spellings(kg_cli: Any, analysed_store_path: Path) -> None:
    query = "SELECT year, count(*) AS n FROM papers WHERE year IS NOT NULL GROUP BY year ORDER BY year"
    as_csv = kg_cli("analytics", "sql", query, "-f", "csv", store=analysed_store_path, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(as_csv)))
    assert rows and set(rows[0]) == {"year", "n"}
    assert kg_cli("analytics", "sql", query, "--csv", store=analysed_store_path, check=True).stdout == as_csv
    as_json = json.loads(kg_cli("analytics", "sql", query, "-f", "json", store=analysed_store_path, check=True).stdout)
    assert [str(r["year"]) for r in as_json] == [r["year"] for r in rows]
    both = kg_cli("analytics", "sql", query, "--json", "--csv", store=analysed_store_path)
    assert both.returncode == 1 and "cannot be combined" in both.stderr
