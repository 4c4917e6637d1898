"""What every emulator shares: a threaded HTTP server on loopback that starts and stops with it,
a quiet request handler, and a connection reset as a crashing server gives one."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Protocol, Self, TypeVar

__all__ = ["FaultQueue", "LoopbackServer", "QuietHandler", "reset_connection", "reset_or_delay"]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class LoopbackServer:
    """Serves :meth:`handler` on ``http://host:port`` (port 0: a free one) in a thread; a
    context manager. Subclasses give the handler class and a thread name."""

    thread_name = "emulator"

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def start(self) -> Self:
        self._server = _Server((self.host, self.port), self.handler())
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The emulator's base URL: what the client takes as its endpoint or ``--api-url``."""
        return f"http://{self.host}:{self.port}"


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers GET and POST with :meth:`serve`."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def do_GET(self) -> None:
        self.serve("GET")

    def do_POST(self) -> None:
        self.serve("POST")

    def serve(self, method: str) -> None:
        raise NotImplementedError


def reset_connection(handler: BaseHTTPRequestHandler) -> None:
    """Close ``handler``'s connection with a TCP reset (no FIN), as a crashing server does."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


class _Timed(Protocol):
    kind: str
    seconds: float


class _Record(Protocol):
    status: int


def reset_or_delay(handler: BaseHTTPRequestHandler, fault: _Timed | None, record: _Record) -> bool:
    """Carry out what a fault does before any answer: a reset closes the connection (the
    request is recorded with status -1, and True says it is over); a delay waits its seconds."""
    if fault is not None and fault.kind == "reset":
        record.status = -1
        reset_connection(handler)
        return True
    if fault is not None and fault.kind == "delay":
        time.sleep(fault.seconds)
    return False


class _Countdown(Protocol):
    times: int
    skip: int


F = TypeVar("F", bound=_Countdown)


class FaultQueue(Generic[F]):
    """Faults an emulator injects into the next matching requests: each applies ``times``
    times, after letting ``skip`` matching requests through."""

    def __init__(self) -> None:
        self._faults: list[F] = []
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return sum(f.times for f in self._faults)

    def _queue(self, fault: F) -> None:
        with self._lock:
            self._faults.append(fault)

    def _take(self, applies: Callable[[F], bool], *, first: bool = False) -> list[F]:
        """The faults that apply to a request (``first``: the first one only), each using up
        one of its ``times`` (a skipped one, one of its ``skip``)."""
        out = []
        with self._lock:
            for fault in self._faults:
                if fault.times <= 0 or not applies(fault):
                    continue
                if fault.skip > 0:
                    fault.skip -= 1
                    continue
                fault.times -= 1
                out.append(fault)
                if first:
                    break
            self._faults = [f for f in self._faults if f.times > 0]
        return out
