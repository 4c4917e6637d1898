"""Answers built to hurt: decompression bombs, servers that drip one byte a second, XML
whose DTD hides from a text scan. Each is stopped with a clear error, bounded in time and
memory, and nothing broken reaches the cache."""

from __future__ import annotations

import os
import subprocess
import time
import zlib
from pathlib import Path

import httpx
import pytest

from ingest.cache import HttpCache, cache_files
from ingest.http import Politeness, RetryPolicy, build_client, expect_json, send
from ingest.safexml import parse_defused, parse_lxml
from kg.errors import IngestError
from tests.ingest.replay import ReplayServer, drip, status
from tests.servers import KG

REPO = "/github/repos/akfish/PyGithub"


def gzip_bomb(inflated: int) -> bytes:
    """``inflated`` bytes of zeros, gzip-compressed (about a thousandth of the size)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * (1 << 20)
    parts = [packer.compress(block) for _ in range(inflated >> 20)]
    return b"".join(parts) + packer.flush()


def _client(**kwargs: object) -> httpx.Client:
    kwargs.setdefault("politeness", Politeness(0))
    kwargs.setdefault("retry", RetryPolicy(attempts=1))
    return build_client("github", **kwargs)  # type: ignore[arg-type]


def test_a_gzip_bomb_stops_at_the_cap_and_is_not_cached(replay: ReplayServer, tmp_path: Path) -> None:
    bomb = gzip_bomb(256 << 20)
    assert len(bomb) < 1 << 20
    replay.script("GET", REPO, status(200, bomb, headers={"Content-Encoding": "gzip"}))
    cache = HttpCache(tmp_path / "cache")
    with _client(cache=cache, max_body=8 << 20) as client, pytest.raises(IngestError) as caught:
        send(client, "GET", replay.github_url + REPO[len("/github"):], source="github")
    assert "larger than 8,388,608 bytes once decompressed" in caught.value.message
    assert "KG_MAX_RESPONSE_MIB" in caught.value.hint
    assert cache_files(tmp_path / "cache") == []


def test_the_cap_is_configurable_and_a_body_under_it_is_decoded(replay: ReplayServer,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_MAX_RESPONSE_MIB", "1")
    replay.script("GET", REPO, status(200, gzip_bomb(2 << 20), headers={"Content-Encoding": "gzip"}))
    with _client() as client, pytest.raises(IngestError, match="larger than 1,048,576 bytes"):
        client.get(replay.github_url + REPO[len("/github"):])
    packed = zlib.compress(b'{"full_name": "akfish/PyGithub"}')
    replay.script("GET", REPO, status(200, packed, headers={"Content-Encoding": "deflate"}))
    with _client() as client:
        assert client.get(replay.github_url + REPO[len("/github"):]).json() == {"full_name": "akfish/PyGithub"}


def test_stacked_or_unasked_encodings_are_refused(replay: ReplayServer) -> None:
    twice = zlib.compress(zlib.compress(b"{}"))
    replay.script("GET", REPO, status(200, twice, headers={"Content-Encoding": "deflate, deflate"}))
    with _client() as client, pytest.raises(IngestError, match="stacked encodings"):
        client.get(replay.github_url + REPO[len("/github"):])
    replay.script("GET", REPO, status(200, b"x", headers={"Content-Encoding": "br"}))
    with _client() as client, pytest.raises(IngestError, match="did not ask for"):
        client.get(replay.github_url + REPO[len("/github"):])
    assert replay.requests(REPO)[-1].headers["accept-encoding"] == "gzip, deflate"


def test_a_body_that_does_not_parse_never_reaches_the_cache(replay: ReplayServer, tmp_path: Path) -> None:
    cache = HttpCache(tmp_path / "cache")
    url = replay.github_url + REPO[len("/github"):]
    replay.script("GET", REPO, status(200, b'{"full_name": "akfish/PyGi'))
    with _client(cache=cache) as client:
        with pytest.raises(IngestError, match="malformed"):
            expect_json(client.get(url), source="github")
        assert len(cache) == 0
        expect_json(client.get(url), source="github")  # the real answer, parsed: kept
    assert len(cache) == 1
    with _client(cache=cache, offline=True) as client:
        assert client.get(url).json()["full_name"] == "akfish/PyGithub"


@pytest.mark.parametrize("slow_headers", [False, True], ids=["body", "headers"])
def test_a_dripping_server_is_cut_off_at_the_deadline_and_each_retry_has_its_own(
        replay: ReplayServer, slow_headers: bool) -> None:
    replay.script("GET", REPO, drip(0.1, headers=slow_headers, times=None))
    client = build_client("github", politeness=Politeness(0), timeout=1.0,
                          retry=RetryPolicy(attempts=2, base=0.01, sleep=lambda s: None))
    started = time.monotonic()
    with client, pytest.raises(IngestError) as caught:
        send(client, "GET", replay.github_url + REPO[len("/github"):], source="github")
    elapsed = time.monotonic() - started
    # The recorded answer is ~6 KB: at 10 bytes a second that is ten minutes per attempt.
    assert "timed out (tried 2 times)" in caught.value.message and "--timeout" in caught.value.hint
    assert 1.9 < elapsed < 6, elapsed
    assert len(replay.requests(REPO)) == 2


def test_kg_ingest_with_timeout_5_ends_against_a_one_byte_a_second_server(replay: ReplayServer,
                                                                           tmp_path: Path) -> None:
    replay.script("GET", REPO, drip(1.0, times=None))
    started = time.monotonic()
    proc = subprocess.run([str(KG), "--store", ":memory:", "ingest", "github", "akfish/PyGithub",
                           "--api-url", replay.github_url, "--timeout", "5", "--cache-dir", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200", "KG_STORE": ":memory:"})
    elapsed = time.monotonic() - started
    assert proc.returncode != 0 and "timed out" in proc.stdout + proc.stderr
    assert elapsed < 60, elapsed  # four attempts of at most 5 s, and their backoff


UTF16_DTD = ('<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE feed [<!ENTITY t "pwned">]>\n'
             '<feed xmlns="http://www.w3.org/2005/Atom"><title>&t;</title></feed>').encode("utf-16")
PI_DTD = (b'<?xml version="1.0"?>\n<?style a > b?>\n<!DOCTYPE feed [<!ENTITY t "pwned">]>\n'
          b'<feed xmlns="http://www.w3.org/2005/Atom"><title>&t;</title></feed>')
PADDED_DTD = (b'<?xml version="1.0"?>\n<!--' + b" " * 70_000 + b'-->\n<!DOCTYPE feed [<!ENTITY t "pwned">]>\n'
              b'<feed xmlns="http://www.w3.org/2005/Atom"><title>&t;</title></feed>')


@pytest.mark.parametrize("document", [UTF16_DTD, PI_DTD, PADDED_DTD], ids=["utf-16", "pi with >", "long comment"])
def test_the_parsers_themselves_refuse_a_dtd_however_it_is_hidden(document: bytes) -> None:
    for parse in (parse_lxml, parse_defused):
        with pytest.raises(IngestError, match="DTD|entit"):
            parse(document, source="arxiv", url="http://127.0.0.1/api/query")
    plain = parse_lxml(b'<feed xmlns="http://www.w3.org/2005/Atom"><title>ok</title></feed>',
                       source="arxiv", url="http://127.0.0.1/api/query")
    assert plain.findtext("{http://www.w3.org/2005/Atom}title") == "ok"
