"""``kg ingest citations`` as a user runs it: the key, the summary, failures, the cache."""

from __future__ import annotations

import json
import logging
import re

from ingest.cache import cache_files
from tests.citations.conftest import KEY
from tests.conftest import nquads


def test_the_key_is_sent_as_x_api_key_and_written_nowhere(kg_cli, emulator, built_store_path, tmp_path) -> None:
    cache = tmp_path / "cache"
    env = {"S2_API_KEY": KEY, "KG_CACHE_DIR": str(cache)}
    args = ("ingest", "citations", "--api-url", emulator.url, "--delay", "0")
    runs = [kg_cli(*args, store=built_store_path, env=env),
            kg_cli(*args, "-f", "json", store=built_store_path, env=env),
            kg_cli(*args, "--offline", "--full", store=built_store_path, env=env),
            kg_cli(*args, "ARXIV:2402.03300", "-f", "csv", store=built_store_path, env=env)]
    assert [r.returncode for r in runs] == [0, 0, 0, 0], [r.stderr for r in runs]
    assert emulator.requests and all(r.with_key for r in emulator.requests)
    for run in runs:
        assert KEY not in run.stdout and KEY not in run.stderr
    assert KEY.encode() not in nquads(built_store_path)
    files = cache_files(cache)
    assert files and all(KEY.encode() not in f.read_bytes() for f in files)
    summary = json.loads(runs[1].stdout)
    assert summary["source"] == "semanticscholar" and summary["unchanged"] > 20 and summary["http"]["requests"] == 1
    assert "requests" in runs[0].stdout and "missing" in runs[0].stdout
    assert runs[3].stdout.splitlines()[0] == "item,outcome,detail"


def test_a_refused_key_fails_with_a_hint_and_writes_nothing(kg_cli, emulator, built_store_path) -> None:
    before = nquads(built_store_path)
    bad = "s2-wrong-key-000000000000"
    run = kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=built_store_path,
                 env={"S2_API_KEY": bad})
    assert run.returncode == 1 and "HTTP 403" in run.stderr and "S2_API_KEY" in run.stderr
    assert bad not in run.stderr and bad not in run.stdout
    assert nquads(built_store_path) == before
    as_json = kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", "-f", "json",
                     store=built_store_path, env={"S2_API_KEY": bad})
    error = json.loads(as_json.stdout)
    assert error["ok"] is False and "Nothing was written" in error["hint"]


def test_the_key_stays_out_of_the_logs(emulator, source_for, built_store, caplog) -> None:
    from ingest.citations import ingest_citations

    source = source_for(key=KEY)
    with caplog.at_level(logging.DEBUG):
        ingest_citations(built_store, source)
        emulator.faults.status(500, times=5)
        try:
            ingest_citations(built_store, source)
        except Exception as error:  # noqa: BLE001 - the message is what is checked
            assert KEY not in str(error)
    assert caplog.records and all(KEY not in r.getMessage() for r in caplog.records)


def test_the_keyring_holds_the_key_when_the_environment_does_not(monkeypatch) -> None:
    import keyring
    from keyring.backend import KeyringBackend

    from ingest.semanticscholar import KEYRING_SERVICE, api_key

    class Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def get_password(self, service: str, username: str) -> str | None:
            return KEY if (service, username) == (KEYRING_SERVICE, "api-key") else None

        def set_password(self, service: str, username: str, password: str) -> None:
            raise NotImplementedError

        def delete_password(self, service: str, username: str) -> None:
            raise NotImplementedError

    assert api_key() is None
    keyring.set_keyring(Memory())
    assert api_key() == KEY
    monkeypatch.setenv("S2_API_KEY", "from-the-environment")
    assert api_key() == "from-the-environment"


def test_unknown_ids_are_listed_as_missing(kg_cli, emulator, built_store_path) -> None:
    # Every id unknown: an error (exit 1) naming them, and nothing written.
    run = kg_cli("ingest", "citations", "ARXIV:2999.00001", "--api-url", emulator.url, "--delay", "0",
                 store=built_store_path)
    assert run.returncode == 1 and "ARXIV:2999.00001" in run.stderr and "nothing was written" in run.stderr
    as_json = kg_cli("ingest", "citations", "ARXIV:2999.00001", "-f", "json", "--api-url", emulator.url,
                     "--delay", "0", store=built_store_path)
    assert as_json.returncode == 1 and '"ok": false' in as_json.stdout
    # One known among them: the unknown one is listed as missing.
    run = kg_cli("ingest", "citations", "ARXIV:2999.00001", "ARXIV:2412.06464", "--no-references", "--api-url",
                 emulator.url, "--delay", "0", store=built_store_path)
    assert run.returncode == 0 and "ARXIV:2999.00001" in run.stdout and "written in" in run.stdout


def test_without_a_key_it_keeps_to_one_request_a_second(kg_cli, emulator, built_store_path) -> None:
    run = kg_cli("ingest", "citations", "ARXIV:2412.06464", "ARXIV:2510.26692", "--no-references",
                 "--api-url", emulator.url, store=built_store_path)
    assert run.returncode == 0, run.stderr
    times = [r.at for r in emulator.requests]
    assert len(times) == 3 and not any(r.with_key for r in emulator.requests)
    assert all(b - a >= 0.95 for a, b in zip(times, times[1:], strict=False))


def test_suggest_without_citations_says_none_and_how_to_get_them_instead_of_an_empty_table(
        kg_cli, built_store_path) -> None:
    lineage = kg_cli("suggest", "lineage", store=built_store_path, env={"COLUMNS": "80"}, check=True).stdout
    assert lineage.startswith("Suggested lineage: none\n")
    assert "id   child" not in lineage and "no citation" in lineage  # existing edges still checked
    assert "run kg ingest citations first" in lineage
    reading = kg_cli("suggest", "reading", store=built_store_path, env={"COLUMNS": "80"}, check=True).stdout
    assert reading.startswith("Read next: none\n") and "rank" not in reading
    assert "run kg ingest citations first" in reading


def test_kg_suggest_lineage_reads_at_80_columns(kg_cli, emulator, built_store_path) -> None:
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=built_store_path,
           env={"S2_API_KEY": KEY}, check=True)
    run = kg_cli("suggest", "lineage", store=built_store_path, env={"COLUMNS": "80"}, check=True)
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and len(lines) < 90
    heads = [line for line in lines if line.startswith("sg-")]
    assert heads and all(re.match(r"sg-[0-9a-f]{8}  \S", line) for line in heads)
    # The evidence reads in lines as wide as the terminal, not in a column 14 characters wide.
    evidence = [line for line in lines if line.startswith("    [")]
    assert evidence and max(len(line) for line in evidence) > 60
    assert "Existing edges against the citations" in run.stdout and "(no citation evidence)" in run.stdout
    # The note on stderr (which source answered) folds at the terminal's width too.
    assert run.stderr.strip() and max(len(line) for line in run.stderr.splitlines()) <= 80
    wide = kg_cli("suggest", "lineage", "--wide", store=built_store_path, env={"COLUMNS": "200"}, check=True)
    assert re.search(r"^id\s+child\s+relation\s+parent\s+score\s+evidence", wide.stdout, re.MULTILINE)
