"""Shared fixtures. Tests write only under tmp_path and never see the user's store,
tokens or proxies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from kg.store.embedded import OxigraphStore
    from tests.servers import VirtuosoServer

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
FIXTURES = SHARED / "fixtures"
#: Debian's Chromium, which the browser tests drive through Playwright (never a download).
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for name in ("GITHUB_TOKEN", "ZOTERO_API_KEY", "KG_STORE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    # The default store lives under XDG_DATA_HOME: point it somewhere private.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg")))


@pytest.fixture
def closing() -> Iterator[Callable[[T], T]]:
    """``closing(thing)`` returns ``thing`` and closes it when the test ends (clients a
    factory fixture makes, in the order made)."""
    made: list[Any] = []

    def keep(thing: T) -> T:
        made.append(thing)
        return thing

    yield keep
    for thing in made:
        thing.close()


@pytest.fixture
def fresh_store() -> Iterator[OxigraphStore]:
    """An empty in-memory Oxigraph store."""
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(None)
    yield store
    store.close()


@pytest.fixture(scope="session")
def built_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store on disk with `kg build` done once per session. Copy it before changing it."""
    from kg.build import build
    from kg.store.embedded import OxigraphStore

    path = tmp_path_factory.mktemp("built") / "store"
    store = OxigraphStore(path)
    report = build(store, validate=False)
    assert report.techniques == 39
    store.close()
    return path


def opened_copy(source: Path, target: Path) -> Iterator[OxigraphStore]:
    """The store at ``source`` copied to ``target`` and open, closed afterwards (a fixture's body)."""
    from kg.store.embedded import OxigraphStore

    shutil.copytree(source, target)
    store = OxigraphStore(target)
    yield store
    store.close()


def at_once(call: Callable[[], T], times: int) -> list[T]:
    """What ``call`` returned in each of ``times`` threads started together (in the order they finished)."""
    import threading

    results: list[T] = []
    lock = threading.Lock()

    def one() -> None:
        result = call()
        with lock:
            results.append(result)

    threads = [threading.Thread(target=one) for _ in range(times)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def nquads(path: Path) -> bytes:
    """Every graph of the store at ``path`` as N-Quads, to look for what must not be there."""
    import io

    import pyoxigraph as ox

    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(path)
    try:
        out = io.BytesIO()
        store.dump(out, fmt=ox.RdfFormat.N_QUADS)
        return out.getvalue()
    finally:
        store.close()


@pytest.fixture
def built_store(built_store_dir: Path, tmp_path: Path) -> Iterator[OxigraphStore]:
    """A private copy of the built store, open."""
    yield from opened_copy(built_store_dir, tmp_path / "store")


@pytest.fixture
def built_store_path(built_store_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the built store, closed (for CLI tests)."""
    path = tmp_path / "store"
    shutil.copytree(built_store_dir, path)
    return path


@pytest.fixture
def seed_reading_list() -> Path:
    matches = sorted(SEEDS.glob("004_*.txt"))
    assert matches, f"the user's reading list is expected in {SEEDS}"
    return matches[0]


@pytest.fixture
def kg_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real `kg` console script; returns a function(args, store=...) -> CompletedProcess."""
    exe = Path(sys.executable).with_name("kg")

    def run(*args: str, store: Path | str | None = None, env: dict[str, str] | None = None,
            input: str | None = None, check: bool = False) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
        if store is not None:
            full_env["KG_STORE"] = str(store)
        proc = subprocess.run([str(exe), *args], capture_output=True, text=True, env=full_env,
                              input=input, timeout=300)
        if check and proc.returncode != 0:
            raise AssertionError(f"kg {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    return run


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Tests that start servers or browsers stay on one worker per module (xdist loadgroup).
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture(scope="session")
def virtuoso() -> Iterator[VirtuosoServer]:
    """Virtuoso 7 on loopback for the session, with update granted and the limits it ships
    with (see tests.servers.virtuoso_server). Clear it before use: tests share it."""
    from tests.servers import virtuoso_server

    with virtuoso_server() as server:
        yield server


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Iterator[Path]:
    """A writable copy of the packaged catalog data, for tests that break it on purpose."""
    from kg.catalog import data_dir

    target = tmp_path / "data"
    shutil.copytree(data_dir(), target)
    yield target


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A headless Chromium driven by Playwright (Debian's chromium, not a download)."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
