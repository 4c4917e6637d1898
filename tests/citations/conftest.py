"""Fixtures for the citation tests: the Semantic Scholar emulator serving the ML citation
graph, fast clients pointed at it, and a built store."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from ingest.emulators.semanticscholar import SemanticScholarEmulator
from ingest.http import Politeness, RetryPolicy, build_client
from ingest.semanticscholar import RETRY_STATUSES, SemanticScholarSource
from tests.citations import ml_graph
from tests.ingest.conftest import SleepRecorder, fast  # noqa: F401 - fast is a fixture

KEY = "s2-test-key-0123456789abcdef"


@pytest.fixture(autouse=True)
def private_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the user's key, keyring, cache or API settings."""
    import keyring
    from keyring.backends import null

    for name in ("S2_API_KEY", "S2_API_URL", "KG_CACHE_DIR", "KG_CONTACT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    previous = keyring.get_keyring()
    keyring.set_keyring(null.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def emulator() -> Iterator[SemanticScholarEmulator]:
    with SemanticScholarEmulator(keys=[KEY]) as emu:
        emu.ids = ml_graph.build(emu)  # type: ignore[attr-defined]
        yield emu


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def source_for(emulator: SemanticScholarEmulator, sleeps: SleepRecorder, tmp_path: Path,
               closing: Callable[[httpx.Client], httpx.Client]) -> Callable[..., SemanticScholarSource]:
    """A source over a fast client (no spacing, instant recorded backoff) for the emulator."""

    def make(*, key: str | None = None, attempts: int = 3, cache: bool = True, offline: bool = False,
             url: str | None = None) -> SemanticScholarSource:
        from ingest.cache import HttpCache

        retry = RetryPolicy(attempts=attempts, base=0.01, sleep=sleeps)
        client = closing(build_client("semanticscholar", headers={"x-api-key": key} if key else None,
                                      politeness=Politeness(0.0), retry=retry, timeout=5.0,
                                      cache=HttpCache(tmp_path / "cache" / "semanticscholar") if cache else None,
                                      offline=offline, retry_statuses=RETRY_STATUSES))
        return SemanticScholarSource(client=client, api_url=url or emulator.url, has_key=key is not None,
                                     retry=retry)

    return make


@pytest.fixture
def source(source_for: Callable[..., SemanticScholarSource]) -> SemanticScholarSource:
    return source_for()
