"""Servers the tests start on 127.0.0.1 and wait for: an in-memory ``oxigraph serve``, an
ASGI app under uvicorn in a thread of the test process, and ``kg serve`` as a real
process. Each is a context manager that stops what it started."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = ["KG", "OXIGRAPH", "OxigraphServer", "free_port", "kg_serve", "oxigraph_server", "serving"]

KG = Path(sys.executable).with_name("kg")
OXIGRAPH = Path(sys.executable).with_name("oxigraph")


def free_port() -> int:
    """A port on 127.0.0.1 that nobody listened on a moment ago."""
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


@contextmanager
def kg_serve(store: Path, *args: str, ready: str = "/static/app.css", timeout: float = 60,
             env: dict[str, str] | None = None) -> Iterator[tuple[subprocess.Popen[str], dict[str, object]]]:
    """``kg serve`` on 127.0.0.1 with a free port (``--port 0``); yields the process and
    the ``serve.json`` it published once ``ready`` (a path under the server) answers 200
    within ``timeout`` seconds. Stopped with SIGTERM on exit (killed if it will not stop)."""
    env = {**(env or os.environ), "KG_STORE": str(store), "COLUMNS": "200"}
    proc = subprocess.Popen([str(KG), "serve", "--port", "0", "--log-level", "warning", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + timeout
        serve_file = store / "serve.json"
        while not serve_file.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "kg serve did not start"
            time.sleep(0.05)
        info = json.loads(serve_file.read_text())
        base = str(info["sparql"]).removesuffix("/sparql")
        while True:
            try:
                if httpx.get(base + ready, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "kg serve did not answer"
            time.sleep(0.05)
        yield proc, info
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
