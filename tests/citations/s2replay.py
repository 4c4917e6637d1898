"""A real HTTP server on 127.0.0.1 (port 0) that answers like the Semantic Scholar API from
the VCR cassettes recorded in ``../shared/fixtures/semanticscholar`` (read in place, never
copied).

What is recorded and what is derived:

- A request whose method, path, query (as a set of parameters) and JSON body match a
  recorded interaction gets the recorded status, content type and body: the batch, the
  two pages of references, the 403, search with its second page, an empty search, the
  recommendations, the single-paper lookups (200, 404, 400).
- A request for a paper or a paper's citation list that no recording answers gets the
  recorded 404 body with its id put in (``{"error":"Paper with id X not found"}``); one
  that names a field the API does not know gets the recorded 400 body with those names.
  Anything else is a 404 ``{"message":"Not Found"}``.

:attr:`S2Replay.log` holds every request (method, path, query, headers, body).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from ingest.emulators.loopback import LoopbackServer, QuietHandler
from ingest.emulators.semanticscholar import EDGE_FIELDS, PAPER_FIELDS

__all__ = ["S2Replay"]


@dataclass
class Recorded:
    method: str
    path: str
    query: frozenset[tuple[str, str]]
    body: Any
    status: int
    content: bytes
    content_type: str


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


def _load(root: Path) -> list[Recorded]:
    out = []
    for path in sorted(root.glob("*.yaml")):
        for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
            request, response = interaction["request"], interaction["response"]
            parts = urlsplit(request["uri"])
            raw = request.get("body") or ""
            body = json.loads(raw) if raw else None
            content = response.get("body", {}).get("string") if "body" in response else response.get("content")
            status = response["status"]["code"] if "status" in response else response["status_code"]
            ctype = (response.get("headers", {}).get("Content-Type") or ["application/json"])[0]
            out.append(Recorded(request["method"], parts.path, frozenset(parse_qsl(parts.query)), body, int(status),
                                (content or "").encode("utf-8"), ctype))
    return out


class S2Replay(LoopbackServer):
    """The replay server; a context manager. ``url`` is the API root to pass as ``api_url``."""

    def __init__(self, fixtures: Path | None = None) -> None:
        super().__init__()
        if fixtures is None:
            from tests.conftest import FIXTURES

            fixtures = FIXTURES
        self.recorded = _load(fixtures / "semanticscholar")
        self.not_found = next(r for r in self.recorded if r.status == 404 and b"Paper with id" in r.content)
        self.bad_field = next(r for r in self.recorded if r.status == 400)
        self.log: list[Seen] = []
        self._lock = threading.Lock()

    thread_name = "s2-replay"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"replay": self})

    def answer(self, method: str, path: str, query: str, body: bytes) -> tuple[int, bytes, str]:
        params = frozenset(parse_qsl(query))
        payload = json.loads(body) if body else None
        for r in self.recorded:
            if (r.method, r.path, r.query, r.body) == (method, path, params, payload):
                return r.status, r.content, r.content_type
        fields = [f for f in dict(params).get("fields", "").split(",") if f]
        unknown = [f for f in fields if f not in PAPER_FIELDS | EDGE_FIELDS]
        if unknown:
            recorded = json.loads(self.bad_field.content)["error"]
            return 400, json.dumps({"error": re.sub(r"\[.*\]", "[" + ", ".join(unknown) + "]", recorded)}).encode(), \
                "application/json"
        m = re.match(r"^/graph/v1/paper/(?P<id>.+?)(?:/(?:citations|references))?$", path)
        if m and method == "GET":
            recorded = json.loads(self.not_found.content)["error"]
            return 404, json.dumps({"error": recorded.replace(" 0 ", f" {m.group('id')} ")}).encode(), \
                "application/json"
        return 404, b'{"message":"Not Found"}', "application/json"


class _Handler(QuietHandler):
    replay: S2Replay
    protocol_version = "HTTP/1.1"

    def serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.replay._lock:
            self.replay.log.append(Seen(method, parts.path, dict(parse_qsl(parts.query)),
                                        {k.lower(): v for k, v in self.headers.items()}, body))
        status, content, ctype = self.replay.answer(method, parts.path, parts.query, body)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)
