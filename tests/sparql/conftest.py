"""Real servers for the SPARQL tests: an Oxigraph server (``oxigraph serve`` from the
oxigraph package) on loopback, our own ASGI app under uvicorn, and a ``store`` fixture
that runs a test on the embedded store and on the remote one."""

from __future__ import annotations

import io
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

OXIGRAPH = Path(sys.executable).with_name("oxigraph")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class OxigraphServer:
    base: str
    process: subprocess.Popen[bytes]

    @property
    def spec(self) -> str:
        """A store spec with the Graph Store Protocol URL."""
        return f"{self.base}/query;update=/update;gsp=/store"

    def load(self, nquads: bytes) -> None:
        response = httpx.post(f"{self.base}/store", content=nquads,
                              headers={"Content-Type": "application/n-quads"}, timeout=60)
        assert response.status_code in (200, 201, 204), response.text


@contextmanager
def oxigraph_server(*flags: str) -> Iterator[OxigraphServer]:
    """An in-memory Oxigraph server on 127.0.0.1, stopped on exit."""
    assert OXIGRAPH.exists(), "the oxigraph server is installed with the dev extras"
    for _attempt in range(3):
        port = free_port()
        process = subprocess.Popen([str(OXIGRAPH), "serve", "--bind", f"127.0.0.1:{port}", *flags],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and process.poll() is None:
            try:
                httpx.get(f"{base}/query", params={"query": "ASK {}"}, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.02)
        if process.poll() is None:
            try:
                yield OxigraphServer(base, process)
            finally:
                process.terminate()
                process.wait(timeout=10)
            return
        process.wait()  # the port was taken in the meantime: try another
    raise RuntimeError("could not start an oxigraph server")


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


@pytest.fixture(params=["embedded", "remote"])
def store(request: pytest.FixtureRequest, built_nquads: bytes):
    """The built graph on the embedded store, then on a remote Oxigraph server."""
    if request.param == "embedded":
        yield request.getfixturevalue("built_store")
        return
    from kg.store.remote import RemoteStore

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


@contextmanager
def serving(app: object) -> Iterator[str]:
    """Run an ASGI app under uvicorn on 127.0.0.1:<free port> in a thread; yield its base URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",  # type: ignore[arg-type]
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


@pytest.fixture
def serve() -> Callable[..., object]:
    """serve(store, **settings) -> a context manager yielding the base URL of `create_app`."""
    from kg.server import ServerSettings, create_app

    def start(store: object, **settings: object):
        return serving(create_app(store, ServerSettings(**settings)))  # type: ignore[arg-type]

    return start
