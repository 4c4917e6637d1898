"""Where links show: kg show's counts per relation, kg reading list's techniques, the
lineage exports' papers, kg analytics uptake's table and chart."""

from __future__ import annotations

import json
import re

import pytest


@pytest.fixture
def linked(kg_cli, built_store_path):
    kg_cli("link", store=built_store_path, check=True)
    return built_store_path


def test_kg_show_counts_the_papers_of_each_relation_and_how_many_you_read(kg_cli, linked) -> None:
    kg_cli("reading", "set", "ZeRO-Offload", "read", store=linked, check=True)
    out = " ".join(kg_cli("show", "ZeRO", store=linked, env={"COLUMNS": "80"}, check=True).stdout.split())
    assert "1 paper introduces DeepSpeed ZeRO; you have read 0" in out
    assert "2 papers extend DeepSpeed ZeRO; you have read 1" in out
    assert "ZeRO-Offload: Democratizing Billion-Scale Model Training (read)" in out
    card = json.loads(kg_cli("show", "ZeRO", "-f", "json", store=linked, check=True).stdout)
    assert card["paper_counts"] == {"introduces": {"papers": 1, "read": 0}, "extends": {"papers": 2, "read": 1}}
    assert {p["role"] for p in card["papers"]} == {"introduces", "extends"}
    lines = kg_cli("show", "ZeRO", store=linked, env={"COLUMNS": "80"}, check=True).stdout.splitlines()
    assert all(len(line) <= 80 and line == line.rstrip() for line in lines if "•" in line)


def test_kg_reading_list_shows_each_papers_techniques(kg_cli, linked) -> None:
    rows = json.loads(kg_cli("reading", "list", "-f", "json", store=linked, check=True).stdout)
    offload = next(r for r in rows if r["title"].startswith("ZeRO-Offload"))
    assert offload["techniques"] == [{"technique": "https://w3id.org/techkg/id/technique/zero",
                                      "name": "DeepSpeed ZeRO", "relation": "extends"}]
    table = kg_cli("reading", "list", "--category", "Distributed", store=linked, env={"COLUMNS": "80"},
                   check=True).stdout
    assert re.match(r"status\s+title\s+techniques\s+categories\s+note\s*$", table.splitlines()[1])
    assert "DeepSpeed ZeRO" in table and max(len(line.rstrip()) for line in table.splitlines()) <= 80


def test_the_lineage_export_with_papers_uses_the_links(kg_cli, linked, tmp_path) -> None:
    out = tmp_path / "zero.graphml"
    kg_cli("export", "lineage", "--root", "ZeRO", "--with-papers", "-o", str(out), store=linked, check=True)
    text = out.read_text(encoding="utf-8")
    assert "ZeRO-Offload: Democratizing Billion-Scale Model Training" in text and "extends" in text


def test_kg_analytics_uptake_counts_papers_per_technique_per_year_with_a_chart(kg_cli, linked, tmp_path) -> None:
    chart = tmp_path / "uptake.svg"
    report = json.loads(kg_cli("analytics", "uptake", "ZeRO", "--chart", str(chart), "-f", "json", store=linked,
                               check=True).stdout)
    assert report["totals"] == [{"technique": "DeepSpeed ZeRO", "papers": 3, "read": 0, "first_year": 2019,
                                 "busiest_year": 2021}]
    years = {r["year"]: (r["introduce"], r["extend"]) for r in report["per_year"]}
    assert years == {2019: (1, 0), 2021: (0, 2)}
    assert chart.read_text(encoding="utf-8").startswith("<?xml")
    table = kg_cli("analytics", "uptake", store=linked, env={"COLUMNS": "80"}, check=True).stdout
    assert "adoption curve" in table and "DeepSpeed ZeRO" in table
