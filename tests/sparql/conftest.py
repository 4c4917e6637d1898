"""Real servers for the SPARQL tests (started by :mod:`tests.servers`): an Oxigraph
server (``oxigraph serve`` from the oxigraph package) on loopback, our own ASGI app under
uvicorn, and a ``store`` fixture that runs a test on the embedded store and on the
remote ones (Oxigraph, and the session's Virtuoso 7)."""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

from tests.servers import OxigraphServer, oxigraph_server, serving


@pytest.fixture(scope="session")
def built_nquads(built_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The dataset `kg build` writes, as N-Quads, to seed remote servers quickly."""
    from kg.store.embedded import OxigraphStore

    copy = tmp_path_factory.mktemp("nq") / "store"
    shutil.copytree(built_store_dir, copy)
    store = OxigraphStore(copy)
    out = io.BytesIO()
    store.dump(out, fmt=ox.RdfFormat.N_QUADS)
    store.close()
    return out.getvalue()


@pytest.fixture
def start_oxigraph() -> Callable[..., object]:
    """start_oxigraph(*flags): a context manager running an Oxigraph server."""
    return oxigraph_server


@pytest.fixture
def oxigraph() -> Iterator[OxigraphServer]:
    """An empty Oxigraph server for one test."""
    with oxigraph_server() as server:
        yield server


@pytest.fixture(params=["embedded", "remote", "virtuoso"])
def store(request: pytest.FixtureRequest, built_nquads: bytes):
    """The built graph on the embedded store, then on a remote Oxigraph server, then on
    Virtuoso 7."""
    if request.param == "embedded":
        yield request.getfixturevalue("built_store")
        return
    from kg.store.remote import RemoteStore

    if request.param == "virtuoso":
        server = request.getfixturevalue("virtuoso")
        server.clear()
        server.load(built_nquads)
        with RemoteStore.from_spec(f"{server.base}/sparql") as remote:
            yield remote
        return

    with oxigraph_server() as server:
        server.load(built_nquads)
        with RemoteStore.from_spec(server.spec) as remote:
            yield remote


@pytest.fixture(scope="module")
def shared_remote(built_nquads: bytes) -> Iterator[OxigraphServer]:
    """One Oxigraph server holding the built graph, shared by a module's read-only tests."""
    with oxigraph_server() as server:
        server.load(built_nquads)
        yield server


@pytest.fixture
def serve() -> Callable[..., object]:
    """serve(store, **settings) -> a context manager yielding the base URL of `create_app`."""
    from kg.server import ServerSettings, create_app

    def start(store: object, **settings: object):
        return serving(create_app(store, ServerSettings(**settings)))  # type: ignore[arg-type]

    return start
