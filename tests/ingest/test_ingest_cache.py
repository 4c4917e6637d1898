"""The on-disk HTTP cache: conditional requests, 304s, offline answers, what is written."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from ingest.cache import HttpCache, cache_files
from ingest.http import Politeness, build_client, expect_json, stats_for
from kg.errors import OfflineError
from tests.ingest.replay import ReplayServer


def parsed(response: httpx.Response) -> httpx.Response:
    """What a source does with an answer: parse it (which lets the cache keep it)."""
    expect_json(response, source="github")
    return response


def test_a_cached_etag_makes_the_next_request_conditional(replay: ReplayServer, tmp_path: Path) -> None:
    cache = HttpCache(tmp_path / "github")
    url = replay.github_url + "/repos/akfish/PyGithub"
    with build_client("github", cache=cache) as client:
        first = parsed(client.get(url))
        second = parsed(client.get(url))
        assert stats_for(client).not_modified == 1 and stats_for(client).bodies == 1
    seen = replay.requests("/github/repos/akfish")
    assert "if-none-match" not in seen[0].headers
    assert seen[1].headers["if-none-match"] == '"8600bedcb7fed1d8065e1693e05529ce"' and seen[1].status == 304
    assert second.status_code == 200 and second.content == first.content
    assert second.extensions["techkg_cache"] == "revalidated"


def test_offline_answers_only_from_the_cache_and_names_the_missing_request(replay: ReplayServer,
                                                                           tmp_path: Path) -> None:
    cache = HttpCache(tmp_path / "github")
    with build_client("github", cache=cache) as client:
        parsed(client.get(replay.github_url + "/repos/akfish/PyGithub"))
    served = len(replay.log)
    with build_client("github", cache=cache, offline=True) as client:
        assert client.get(replay.github_url + "/repos/akfish/PyGithub").json()["full_name"] == "akfish/PyGithub"
        with pytest.raises(OfflineError) as caught:
            client.get(replay.github_url + "/repos/twitter/bootstrap")
    assert len(replay.log) == served
    assert "/repos/twitter/bootstrap" in caught.value.message and str(tmp_path / "github") in caught.value.hint


def test_the_cache_keeps_no_request_headers(replay: ReplayServer, tmp_path: Path) -> None:
    cache = HttpCache(tmp_path / "github")
    with build_client("github", cache=cache, token="ghp_cache_header_check_9999", contact="me@example.org") as client:
        parsed(client.get(replay.github_url + "/repos/akfish/PyGithub"))
    metas = [json.loads(p.read_text()) for p in cache_files(tmp_path) if p.suffix == ".json"]
    assert len(metas) == 1
    assert set(metas[0]["headers"]) <= {"content-type", "etag", "last-modified", "link"}
    raw = b"".join(p.read_bytes() for p in cache_files(tmp_path))
    assert b"ghp_cache_header_check_9999" not in raw and b"me@example.org" not in raw


def test_a_damaged_cache_entry_is_fetched_again(replay: ReplayServer, tmp_path: Path) -> None:
    cache = HttpCache(tmp_path / "github")
    url = replay.github_url + "/repos/akfish/PyGithub"
    with build_client("github", cache=cache) as client:
        parsed(client.get(url))
    body = next(p for p in cache_files(tmp_path) if p.suffix == ".body")
    body.write_bytes(body.read_bytes()[:10])
    assert cache.get("GET", url) is None
    with build_client("github", cache=cache) as client:
        assert parsed(client.get(url)).json()["full_name"] == "akfish/PyGithub"
    assert "if-none-match" not in replay.log[-1].headers and len(cache) == 1


def test_posts_are_cached_only_when_asked(replay: ReplayServer, tmp_path: Path) -> None:
    cache = HttpCache(tmp_path / "github")
    query = {"query": "query { r0: repository(owner: $o0, name: $n0) { nameWithOwner } }",
             "variables": {"o0": "akfish", "n0": "PyGithub"}}
    with build_client("github", cache=cache, token="ghp_post_cache_test_0000", politeness=Politeness(0)) as client:
        parsed(client.post(replay.github_url + "/graphql", json=query))
        assert len(cache) == 0
        answer = client.post(replay.github_url + "/graphql", json=query, extensions={"cacheable": True})
        assert len(cache) == 0  # not before the source has parsed it
        parsed(answer)
        assert len(cache) == 1
    with build_client("github", cache=cache, offline=True) as client:
        answer = client.post(replay.github_url + "/graphql", json=query, extensions={"cacheable": True})
    assert answer.json()["data"]["r0"]["nameWithOwner"] == "akfish/PyGithub"


def test_offline_without_a_cache_is_refused() -> None:
    from kg.errors import IngestError

    with pytest.raises(IngestError) as caught:
        build_client("github", offline=True)
    assert "--cache-dir" in caught.value.hint
