"""`kg serve` as a real process: serve.json while it runs, the lock hint, a clean stop."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from subprocess import Popen

import httpx
import pytest

from tests import servers


@contextmanager
def kg_serve(store: Path, *args: str) -> Iterator[tuple[Popen[str], dict[str, object]]]:
    """``kg serve`` once its SPARQL endpoint answers an ASK."""
    with servers.kg_serve(store, *args, ready="/sparql?query=ASK%20%7B%7D", timeout=30) as started:
        yield started


def test_serve_publishes_its_url_and_other_commands_are_pointed_to_it(kg_cli, built_store_path: Path) -> None:
    with kg_serve(built_store_path) as (proc, info):
        url = str(info["sparql"])
        assert url.startswith("http://127.0.0.1:") and url.endswith("/sparql") and info["pid"] == proc.pid
        assert "token" not in json.dumps(info).lower()
        locked = kg_cli("--wait", "0", "reading", "set", "GPipe", "read", store=built_store_path)
        assert locked.returncode == 1 and "kg serve" in locked.stderr and url in locked.stderr
        assert kg_cli("stats", store=built_store_path).returncode == 0  # readers are never blocked
        through = kg_cli("query", "descendants", "-p", "technique=MQA", "-f", "json", store=url, check=True)
        rows = json.loads(through.stdout)["results"]["bindings"]
        assert "Grouped-Query Attention" in {r["descendantName"]["value"] for r in rows}
        refused = kg_cli("reading", "set", "GPipe", "read", store=url)
        assert refused.returncode == 1 and "read-only" in refused.stderr and "--allow-update" in refused.stderr
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    assert not (built_store_path / "serve.json").exists()
    assert kg_cli("--wait", "0", "reading", "set", "GPipe", "read", store=built_store_path).returncode == 0


def test_serve_with_updates_takes_writes_that_carry_the_token(kg_cli, built_store_path: Path) -> None:
    with kg_serve(built_store_path, "--allow-update", "--token", "t0ken", "--max-rows", "1000") as (proc, info):
        url = str(info["sparql"])
        out = kg_cli("reading", "set", "GPipe", "read", store=url, env={"KG_STORE_TOKEN": "t0ken"}, check=True)
        assert "to-read → read" in out.stdout
        big = httpx.get(url, params={"query": "SELECT * WHERE { ?s ?p ?o }"})
        assert big.status_code == 422 and "1000 rows" in big.text
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert not (built_store_path / "serve.json").exists()
    rows = json.loads(kg_cli("reading", "list", "--status", "read", "-f", "json", store=built_store_path,
                             check=True).stdout)
    assert any(r["title"].startswith("GPipe") for r in rows)


@pytest.mark.parametrize("args, words", [
    (["--allow-update"], "needs a token"),
    (["--port", "70000"], "--port"),
])
def test_serve_refuses_unsafe_or_impossible_settings(kg_cli, tmp_path: Path, args: list[str], words: str) -> None:
    out = kg_cli("serve", *args, store=tmp_path / "s")
    assert out.returncode != 0 and words in out.stderr + out.stdout
    assert not (tmp_path / "s" / "serve.json").exists()


def test_techkgs_own_uploads_pass_kg_serves_update_limit(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    """A 1.1 MB import and a large transaction through `kg serve --allow-update` with its
    default 256 KiB limit: sent in requests under the limit, all of it arrives."""
    dump = tmp_path / "big.nt"
    dump.write_text("".join(f'<http://example.org/s{i}> <http://example.org/p> "value number {i} of many" .\n'
                            for i in range(16_000)), encoding="utf-8")
    assert dump.stat().st_size > 1_000_000
    listed = tmp_path / "list.md"
    from tests.store.lists import my_list

    my_list(listed, read=20)
    env = {**os.environ, "KG_SERVE_TOKEN": "t0ken", "KG_STORE_TOKEN": "t0ken"}
    ready = "/sparql?query=ASK%20%7B%7D"
    with servers.kg_serve(built_store_path, "--allow-update", ready=ready, env=env) as (_p, info):
        url = str(info["sparql"])
        loaded = kg_cli("import", "rdf", str(dump), "--graph", "big", "-f", "json", store=url, env=env)
        assert loaded.returncode == 0, loaded.stderr
        assert json.loads(loaded.stdout)["triples"] == 16_000
        imported = kg_cli("import", "reading-list", str(listed), "-f", "json", store=url, env=env)
        assert imported.returncode == 0, imported.stderr
        count = httpx.post(url, data={"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH "
                                               "<https://w3id.org/techkg/graph/import/big> { ?s ?p ?o } }"},
                           headers={"Accept": "application/sparql-results+json"}, timeout=60)
        assert count.json()["results"]["bindings"][0]["n"]["value"] == "16000"
