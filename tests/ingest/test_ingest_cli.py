"""``kg ingest arxiv`` and ``kg ingest github`` end to end: the real console script
against the replay server."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.ingest.replay import ReplayServer


def test_ingest_arxiv_prints_a_summary_and_provenance_shows_the_run(kg_cli, replay: ReplayServer,
                                                                     built_store_path: Path) -> None:
    out = kg_cli("ingest", "arxiv", "1605.08386", "2104.12255v1", "0808.05394", "--api-url", replay.arxiv_url,
                 "--delay", "0", "--contact", "reader@example.org", store=built_store_path, check=True)
    for word in ("added", "updated", "unchanged", "missing", "failed", "0808.05394", "1 requests"):
        assert word in out.stdout
    assert "reader@example.org" in replay.requests("/api/query")[0].headers["user-agent"]
    rows = json.loads(kg_cli("provenance", "1605.08386", "-f", "json", store=built_store_path, check=True).stdout)
    titles = [r for r in rows if r["property"].endswith("/title")]
    assert [{k: r[k] for k in ("graph", "property", "value", "activity")} for r in titles] == [
        {"graph": "arxiv", "property": "http://purl.org/dc/terms/title",
         "value": "Heat-bath random walks with Markov bases", "activity": "kg ingest arxiv"}]
    assert titles[0]["source"] == [replay.arxiv_url] and titles[0]["modified"] and titles[0]["ended"]
    table = kg_cli("provenance", "1605.08386", store=built_store_path, check=True).stdout
    assert "dcterms:title" in table and "kg ingest arxiv" in table


def test_ingest_arxiv_names_a_rejected_id_without_a_traceback(kg_cli, replay: ReplayServer, tmp_path: Path) -> None:
    out = kg_cli("ingest", "arxiv", "abc", "--api-url", replay.arxiv_url, "--delay", "0", store=tmp_path / "s")
    assert out.returncode == 1 and "'abc'" in out.stderr and "hint:" in out.stderr
    assert "Traceback" not in out.stderr
    as_json = kg_cli("ingest", "arxiv", "abc", "--api-url", replay.arxiv_url, "--delay", "0", "-f", "json",
                     store=tmp_path / "s")
    assert json.loads(as_json.stdout)["ok"] is False


def test_search_and_bulk_modes_from_the_command_line(kg_cli, replay: ReplayServer, tmp_path: Path) -> None:
    store = tmp_path / "store"
    found = json.loads(kg_cli("ingest", "arxiv", "--query", "testing", "--max", "10", "--api-url", replay.arxiv_url,
                              "--delay", "0", "-f", "json", store=store, check=True).stdout)
    assert found["mode"] == "search" and found["added"] == 10
    harvested = json.loads(kg_cli("ingest", "arxiv", "--oai", "--set", "math", "--api-url", replay.oai_url,
                                  "--delay", "0", "-f", "json", store=store, check=True).stdout)
    assert harvested["mode"] == "oai" and harvested["added"] + harvested["updated"] > 5
    assert any("pages harvested" in n for n in harvested["notes"])
    bad = kg_cli("ingest", "arxiv", "--set", "cs", store=store)
    assert bad.returncode == 1 and "--oai" in bad.stderr


def test_ingest_github_twice_gets_304s_and_prints_csv(kg_cli, replay: ReplayServer, tmp_path: Path) -> None:
    store = tmp_path / "store"
    kg_cli("ingest", "github", "PyGithub/PyGithub", "stellarcarbon/sorocarbon", "--api-url", replay.github_url,
           store=store, check=True)
    second = kg_cli("ingest", "github", "--api-url", replay.github_url, "-f", "csv", store=store, check=True)
    rows = list(csv.DictReader(io.StringIO(second.stdout)))
    assert {(r["item"], r["outcome"]) for r in rows} == {("PyGithub/PyGithub", "unchanged"),
                                                         ("stellarcarbon/sorocarbon", "unchanged")}
    again = kg_cli("ingest", "github", "--api-url", replay.github_url, store=store, check=True)
    assert "answered 304 Not Modified" in again.stdout
    facts = json.loads(kg_cli("provenance", "PyGithub/PyGithub", "-f", "json", store=store, check=True).stdout)
    stars = [f for f in facts if f["property"].endswith("#stars")]
    assert [{k: r[k] for k in ("graph", "property", "value", "activity", "source")} for r in stars] == [
        {"graph": "github", "property": "https://w3id.org/techkg/ns#stars", "value": 5001,
         "activity": "kg ingest github", "source": [replay.github_url]}]
    assert len([f for f in facts if f["property"].endswith("#snapshot")]) == 3
    offline = kg_cli("ingest", "github", "PyGithub/PyGithub", "twitter/bootstrap", "--offline",
                     "--api-url", replay.github_url, store=store, check=True)
    assert "not in the cache" in offline.stdout and "twitter/bootstrap" in offline.stdout


def test_ingest_help_lists_the_sources(kg_cli) -> None:
    out = kg_cli("ingest", "--help", check=True).stdout
    assert "arxiv" in out and "github" in out
    arxiv = kg_cli("ingest", "arxiv", "--help", check=True).stdout
    for option in ("--api-url", "--offline", "--query", "--max", "--oai", "--set", "--from", "--contact", "--delay"):
        assert option in arxiv
