"""``kg refresh``: the incremental ingests of the refresh configuration, one command, one
lock, a failed source leaving its graph as it was, through the real ``kg`` script against
the replay and emulator servers."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from kg.follows import follow as kg_follow
from kg.graphs import CITATIONS, GITHUB
from kg.iris import technique_iri
from kg.store.embedded import OxigraphStore


def follow(store_path: Path, *techniques: str) -> None:
    with OxigraphStore(store_path) as store:
        kg_follow(store, [technique_iri(t) for t in techniques])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_init_writes_a_commented_configuration_and_keeps_one_that_exists(kg_cli, tmp_path) -> None:
    path = tmp_path / "refresh.toml"
    done = kg_cli("refresh", "--init", "--config", str(path), check=True)
    assert "Wrote" in done.stdout and "[arxiv]" in path.read_text() and "[citations]" in path.read_text()
    again = kg_cli("refresh", "--init", "--config", str(path))
    assert again.returncode == 1 and "exists already" in again.stderr
    kg_cli("refresh", "--init", "--force", "--config", str(path), check=True)


def test_a_bad_configuration_is_refused_naming_the_problem(kg_cli, tmp_path, built_store_path) -> None:
    path = tmp_path / "refresh.toml"
    for text, words in (("[mastodon]\n", "[mastodon] is no source"), ("[github]\ntokn = 'x'\n", "no option 'tokn'"),
                        ("[arxiv]\nsets = 'cs'\n", "sets has the wrong type"), ("[zotero]\n", "needs library"),
                        ("[github\n", "not valid TOML")):
        path.write_text(text)
        proc = kg_cli("refresh", "--config", str(path), store=built_store_path)
        assert proc.returncode == 1 and words in proc.stderr and str(path) in proc.stderr, (text, proc.stderr)
    missing = kg_cli("refresh", "--config", str(tmp_path / "none.toml"), store=built_store_path)
    assert missing.returncode == 1 and "kg refresh --init" in missing.stderr


def test_every_source_runs_and_a_failed_one_leaves_its_graph_as_it_was(
        kg_cli, tmp_path, built_store_path, emulator, replay) -> None:
    follow(built_store_path, "gated-deltanet", "kda")
    with OxigraphStore.open_reader(built_store_path) as store:
        github_before = store.count(GITHUB)
    path = tmp_path / "refresh.toml"
    path.write_text(f"""
[arxiv]
api_url = "{replay.oai_url}"
sets = ["cs"]
first_from = "2000-01-01"
delay = 0.0

[citations]
api_url = "{emulator.url}"
delay = 0.0
max_per_paper = 50

[github]
api_url = "http://127.0.0.1:{closed_port()}"
timeout = 2.0
""")
    proc = kg_cli("refresh", "--config", str(path), "-f", "json", store=built_store_path)
    assert proc.returncode == 1, proc.stderr  # one source failed: cron hears of it
    report = json.loads(proc.stdout)
    outcomes = {s["source"]: s for s in report["sources"]}
    assert [s["source"] for s in report["sources"]] == ["arxiv", "citations", "github"]
    assert outcomes["arxiv"]["outcome"] == "ok" and outcomes["arxiv"]["added"] > 0
    assert outcomes["citations"]["outcome"] == "ok" and outcomes["citations"]["added"] == 2
    assert outcomes["github"]["outcome"] == "failed" and report["failed"] == ["github"]
    with OxigraphStore.open_reader(built_store_path) as store:
        assert store.count(GITHUB) == github_before
        assert store.count(CITATIONS) > 0
    # Only the followed techniques' papers were asked about.
    (batch,) = [json.loads(r.body)["ids"] for r in emulator.requests if r.path.endswith("/batch")]
    assert sorted(batch) == ["ARXIV:2412.06464", "ARXIV:2510.26692"]
    # The next run starts the harvest where the last one stopped.
    again = kg_cli("refresh", "--config", str(path), "--only", "arxiv", store=built_store_path, check=True)
    assert "arxiv" in again.stdout and "ok" in again.stdout
    froms = [s.query["from"][0] for s in replay.requests("/oai") if "from" in s.query]
    assert froms[0] == "2000-01-01" and froms[-1] == replay.oai.response_date[:10]
