"""Fixtures of the workbench tests: stores to serve (a built graph with a verified
kernel; one whose catalog carries hostile names and a repository with a recorded GitHub
snapshot), ``kg serve`` run as a real process on 127.0.0.1 with a free port, and a
headless Chromium driven by Playwright."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.servers import KG, kg_serve, serving

#: Where a few screenshots are copied for people to look at.
SHOTS = Path("/tmp/web-shots")
#: The name Kimi Delta Attention gets in the hostile catalog, one of its aliases and its paper's title.
HOSTILE_NAME = "<script>alert(1)</script>"
HOSTILE_ALIAS = '"><img src=x onerror=alert(2)>'
HOSTILE_TITLE = "Kimi <b>Linear</b> & </script><script>alert(3)</script>"
#: The recorded repository (tests/ingest's replay server) that stands in for KDA's.
RECORDED_REPO = "PyGithub/PyGithub"

#: The workbench's main pages, each at a URL that shows it with content.
MAIN_PAGES = {
    "techniques": "/",
    "technique": "/techniques/gated-deltanet",
    "compare": "/compare?t=gdn&t=kda&t=mamba2",
    "lineage": "/lineage",
    "reading": "/reading",
    "query": "/query?name=descendants",
}


def form_key(page: str) -> str:
    """The form key a workbench page carries (its writes send it back)."""
    match = re.search(r'name="techkg-form-key" content="([^"]+)"', page)
    assert match, "the page carries no form key"
    return match.group(1)


def overflow_at(page: Any, path: str) -> int:
    """Open ``path`` and let it settle; how many pixels the page is wider than the window."""
    page.goto(path)
    page.wait_for_load_state("networkidle")
    return int(page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth"))


def screenshot(page: Any, shot: Path, name: str) -> None:
    """Save the page (the whole length, but for the framed lineage and query pages) as ``shot``, a real
    picture, and keep a copy in :data:`SHOTS`."""
    page.screenshot(path=str(shot), full_page=name not in ("lineage", "query"))
    assert shot.stat().st_size > 10_000
    SHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, SHOTS / shot.name)


def kg(*args: str, store: Path | str | None = None, env: dict[str, str] | None = None,
       check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the real ``kg`` command."""
    full = {**os.environ, "COLUMNS": "200", **(env or {})}
    if store is not None:
        full["KG_STORE"] = str(store)
    proc = subprocess.run([str(KG), *args], capture_output=True, text=True, env=full, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"kg {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def web_store_dir(built_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built graph plus one real verification run of Gated DeltaNet's reference kernel
    (which also records the kernel registry). Copy it before serving it."""
    path = tmp_path_factory.mktemp("web") / "store"
    shutil.copytree(built_store_dir, path)
    kg("kernels", "verify", "gated-deltanet", store=path)
    return path


@pytest.fixture(scope="session")
def hostile_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store built (``kg build --data``) from a catalog copy in which Kimi Delta
    Attention is called :data:`HOSTILE_NAME`, has the alias :data:`HOSTILE_ALIAS`, its
    paper is titled :data:`HOSTILE_TITLE` and its repository is :data:`RECORDED_REPO`,
    ingested from the recorded GitHub answers."""
    from kg.catalog import data_dir
    from tests.ingest.replay import ReplayServer

    base = tmp_path_factory.mktemp("hostile-web")
    data = base / "data"
    shutil.copytree(data_dir(), data)
    techniques = data / "techniques" / "attention.toml"
    text = techniques.read_text(encoding="utf-8")
    start = text.index('id = "kda"')
    end = text.index("[[technique]]", start)
    entry = text[start:end]
    assert entry.count('name = "Kimi Delta Attention"') == 1 and entry.count("repository = ") == 1
    entry = entry.replace('name = "Kimi Delta Attention"', "name = " + json.dumps(HOSTILE_NAME))
    entry = entry.replace("aliases = [", "aliases = [" + json.dumps(HOSTILE_ALIAS) + ", ", 1)
    head, _, tail = entry.partition("repository = ")
    entry = head + "repository = " + json.dumps(RECORDED_REPO) + tail[tail.index("\n"):]
    techniques.write_text(text[:start] + entry + text[end:], encoding="utf-8")
    papers = data / "papers.toml"
    text = papers.read_text(encoding="utf-8")
    start = text.index('key = "kimi-linear"')
    end = text.index("\n[[paper]]", start)
    lines = [("title = " + json.dumps(HOSTILE_TITLE)) if line.startswith("title = ") else line
             for line in text[start:end].splitlines()]
    papers.write_text(text[:start] + "\n".join(lines) + text[end:], encoding="utf-8")
    store = base / "store"
    kg("build", "--data", str(data), store=store)
    with ReplayServer() as replay:
        kg("ingest", "github", RECORDED_REPO, "--api-url", replay.github_url, "--cache-dir", str(base / "cache"),
           store=store)
    return store


@dataclass
class Served:
    """A running ``kg serve``."""

    base: str
    store: Path
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)

    @property
    def sparql(self) -> str:
        return self.base + "/sparql"

    def url(self, path: str) -> str:
        return self.base + path

    def select(self, query: str) -> list[dict[str, str]]:
        """Ask the server's own SPARQL endpoint: what the graph holds now."""
        answer = httpx.post(self.sparql, data={"query": query},
                            headers={"Accept": "application/sparql-results+json"}, timeout=30)
        answer.raise_for_status()
        return [{k: v["value"] for k, v in row.items()} for row in answer.json()["results"]["bindings"]]


@contextmanager
def workbench_process(store: Path, *args: str) -> Iterator[Served]:
    """``kg serve`` on a free port of 127.0.0.1, once its workbench answers; stopped on exit."""
    with kg_serve(store, *args) as (proc, info):
        yield Served(str(info["sparql"]).removesuffix("/sparql"), store, proc)


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


@pytest.fixture(scope="module")
def server(web_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The workbench on a private copy of :func:`web_store_dir`, shared by a module's
    read-only tests."""
    with workbench_process(_copy(web_store_dir, tmp_path_factory.mktemp("served") / "store")) as served:
        yield served


@pytest.fixture
def writable_server(web_store_dir: Path, tmp_path: Path) -> Iterator[Served]:
    """The workbench on a copy of its own, for a test that writes."""
    with workbench_process(_copy(web_store_dir, tmp_path / "store")) as served:
        yield served


@pytest.fixture(scope="module")
def hostile_server(hostile_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with workbench_process(_copy(hostile_store_dir, tmp_path_factory.mktemp("hostile-served") / "store")) as served:
        yield served


@dataclass
class Events:
    """What a page did that a test may want to see: console messages, script errors,
    dialogs (an injected ``alert`` would open one) and requests to other hosts."""

    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        noisy = [c for c in self.console if c.startswith(("error", "warning"))]
        return noisy + self.errors + [f"dialog: {d}" for d in self.dialogs] + [f"request: {u}" for u in self.foreign]


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Callable[..., tuple[Any, Events]]]:
    """``open_page(served, width=1366, height=800)`` → (page, events): a fresh browser
    context on the served workbench that records everything in :class:`Events`."""
    contexts: list[Any] = []

    def make(served: Served, *, width: int = 1366, height: int = 800, **options: Any) -> tuple[Any, Events]:
        context = chromium.new_context(viewport={"width": width, "height": height}, base_url=served.base,
                                       **options)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        events = Events()
        page.on("console", lambda m: events.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: events.errors.append(str(e)))

        def on_dialog(dialog: Any) -> None:
            events.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("request", lambda r: events.foreign.append(r.url)
                if not r.url.startswith((served.base, "data:", "about:", "blob:")) else None)
        return page, events

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def workbench() -> Callable[..., Any]:
    """workbench(store, **settings) → a context manager yielding the base URL of the app
    ``kg serve`` builds (endpoint and workbench), run in this process. ``host`` in the
    settings is what the app believes it listens on; it is bound to 127.0.0.1 all the same."""
    from kg.server import ServerSettings, create_app
    from kg.server.web import workbench_routes

    def start(store: object, **settings: Any) -> Any:
        return serving(create_app(store, ServerSettings(**settings), extra_routes=workbench_routes()))  # type: ignore[arg-type]

    return start
