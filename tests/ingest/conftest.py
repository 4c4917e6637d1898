"""Fixtures for the ingester tests: the replay server, fast HTTP settings, sources."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ingest.replay import ReplayServer


@pytest.fixture(autouse=True)
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads or writes the user's HTTP cache, contact or API settings."""
    for name in ("KG_CACHE_DIR", "KG_CONTACT", "GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


class SleepRecorder:
    """Stands in for time.sleep: records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def fast(sleeps: SleepRecorder):  # noqa: ANN201 - a small factory
    """``build_client`` with no politeness delay, instant recorded backoff and short timeouts."""
    from ingest.http import Politeness, RetryPolicy, build_client

    def make(source: str, **kwargs):  # noqa: ANN003, ANN202
        kwargs.setdefault("politeness", Politeness(0.0))
        kwargs.setdefault("retry", RetryPolicy(attempts=3, base=0.01, sleep=sleeps))
        kwargs.setdefault("timeout", 2.0)
        return build_client(source, **kwargs)

    return make


@pytest.fixture
def arxiv_source(replay: ReplayServer, fast, tmp_path: Path):  # noqa: ANN001, ANN201
    from ingest.arxiv import ArxivSource
    from ingest.cache import HttpCache

    client = fast("arxiv", cache=HttpCache(tmp_path / "cache" / "arxiv"))
    yield ArxivSource(client=client, api_url=replay.arxiv_url)
    client.close()


@pytest.fixture
def github_rest(replay: ReplayServer, fast, sleeps: SleepRecorder, tmp_path: Path):  # noqa: ANN001, ANN201
    from ingest.cache import HttpCache
    from ingest.github import GithubSource

    client = fast("github", cache=HttpCache(tmp_path / "cache" / "github"))
    yield GithubSource(client=client, api_url=replay.github_url, sleep=sleeps, stats_delay=0.0)
    client.close()


def _dump(store) -> bytes:  # noqa: ANN001
    import io

    import pyoxigraph as ox

    out = io.BytesIO()
    store.dump(out, fmt=ox.RdfFormat.N_QUADS)
    return b"\n".join(sorted(out.getvalue().splitlines()))


@pytest.fixture
def dataset():  # noqa: ANN201
    """dataset(store): the whole store as sorted N-Quads, to compare before and after a run."""
    return _dump
