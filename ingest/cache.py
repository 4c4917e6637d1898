"""The on-disk HTTP cache: conditional requests, free refreshes, and ``--offline``.

Every successful answer (HTTP 200) to a GET, and to a POST that asks for it (GraphQL
queries), that its source has parsed (:func:`ingest.http.commit_cache`) is kept on
disk as two files under ``<root>/<source>/<xx>/``: the body, and
a small JSON record with the status, the URL without credentials, a few response
headers (content type, ``ETag``, ``Last-Modified``, ``Link``, ``Last-Modified-Version``)
and when it was stored. Request headers, and so tokens, are never written.

- Online, a GET for which the cache holds an ``ETag`` or ``Last-Modified`` is sent with
  ``If-None-Match`` / ``If-Modified-Since``. A ``304 Not Modified`` is answered from the
  cache: no body crosses the network, and GitHub does not count it against the rate
  limit.
- Offline, nothing touches the network: a cached answer is returned, and a missing one
  raises :class:`kg.errors.OfflineError` naming the request, so a source can say
  exactly what it could not answer.

Responses served from the cache carry the response extension ``techkg_cache``:
``"revalidated"`` (a 304 turned into the cached 200) or ``"offline"``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx

from ingest.secrets import safe_url
from ingest.stats import HttpStats
from kg.errors import OfflineError

__all__ = ["CacheTransport", "CachedResponse", "HttpCache", "cache_files", "default_cache_dir"]

#: Response headers worth keeping; nothing else is written to disk.
KEPT_HEADERS = ("content-type", "etag", "last-modified", "link", "last-modified-version", "total-results")


def default_cache_dir() -> Path:
    """``$KG_CACHE_DIR``, else the per-user cache (``~/.cache/techkg/http`` on Linux)."""
    configured = os.environ.get("KG_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_path

    return user_cache_path("techkg", appauthor=False) / "http"


@dataclass(frozen=True)
class CachedResponse:
    status: int
    url: str
    headers: dict[str, str]
    content: bytes
    stored_at: str

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("last-modified")


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class HttpCache:
    """Cached answers of one source, under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @staticmethod
    def key(method: str, url: str | httpx.URL, body: bytes = b"") -> str:
        digest = hashlib.sha256()
        for part in (method.upper().encode(), str(url).encode(), hashlib.sha256(body).digest()):
            digest.update(part)
            digest.update(b"\x00")
        return digest.hexdigest()

    def _paths(self, key: str) -> tuple[Path, Path]:
        folder = self.root / key[:2]
        return folder / f"{key}.json", folder / f"{key}.body"

    def get(self, method: str, url: str | httpx.URL, body: bytes = b"") -> CachedResponse | None:
        meta_path, body_path = self._paths(self.key(method, url, body))
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            content = body_path.read_bytes()
        except (OSError, ValueError):
            return None
        if len(content) != meta.get("size"):
            return None
        return CachedResponse(int(meta["status"]), meta["url"], dict(meta["headers"]), content, meta["stored_at"])

    def put(self, method: str, url: str | httpx.URL, body: bytes, status: int,
            headers: httpx.Headers | dict[str, str], content: bytes) -> None:
        meta_path, body_path = self._paths(self.key(method, url, body))
        kept = {name: headers[name] for name in KEPT_HEADERS if name in headers}
        meta = {"method": method.upper(), "url": safe_url(url), "status": status, "headers": kept,
                "size": len(content), "stored_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        _write_atomic(body_path, content)
        _write_atomic(meta_path, json.dumps(meta, indent=1).encode())

    def refresh(self, method: str, url: str | httpx.URL, body: bytes, headers: httpx.Headers) -> None:
        """Record a 304: keep the body, take any new validators."""
        cached = self.get(method, url, body)
        if cached is None:
            return
        merged = {**cached.headers, **{n: headers[n] for n in ("etag", "last-modified") if n in headers}}
        self.put(method, url, body, cached.status, merged, cached.content)

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.exists() else 0


class CacheTransport(httpx.BaseTransport):
    """Conditional requests and offline answers in front of the network transport."""

    def __init__(self, inner: httpx.BaseTransport, *, cache: HttpCache, offline: bool, stats: HttpStats,
                 source: str) -> None:
        self.inner = inner
        self.cache = cache
        self.offline = offline
        self.stats = stats
        self.source = source

    def _from_cache(self, request: httpx.Request, cached: CachedResponse, how: str) -> httpx.Response:
        return httpx.Response(cached.status, headers=cached.headers, content=cached.content, request=request,
                              extensions={"techkg_cache": how})

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        cacheable = request.method == "GET" or bool(request.extensions.get("cacheable"))
        if not cacheable:
            if self.offline:
                raise self._missing(request)
            return self.inner.handle_request(request)
        body = request.read()
        cached = self.cache.get(request.method, request.url, body)
        if self.offline:
            if cached is None:
                raise self._missing(request)
            self.stats.from_cache += 1
            return self._from_cache(request, cached, "offline")
        if cached is not None and request.method == "GET":
            if cached.etag:
                request.headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                request.headers["If-Modified-Since"] = cached.last_modified
        response = self.inner.handle_request(request)
        if response.status_code == 304 and cached is not None:
            self.stats.not_modified += 1
            self.cache.refresh(request.method, request.url, body, response.headers)
            return self._from_cache(request, cached, "revalidated")
        if response.status_code == 200:
            # Kept only once the source has parsed the body (ingest.http.commit_cache): an
            # answer that is truncated, malformed or refused never comes back from the cache.
            content, headers, url, method = response.read(), response.headers, request.url, request.method

            def keep() -> None:
                self.cache.put(method, url, body, 200, headers, content)

            response.extensions["techkg_cache_put"] = keep
        return response

    def _missing(self, request: httpx.Request) -> OfflineError:
        url = safe_url(request.url)
        return OfflineError(
            f"{self.source}: --offline, and the cache holds no answer for {request.method} {url}",
            source=self.source, url=url,
            hint=f"Run once without --offline to fill the cache ({self.cache.root}).")

    def close(self) -> None:
        self.inner.close()


def cache_files(root: Path) -> list[Path]:
    """Every file under a cache root (for checks that nothing secret was written)."""
    return [p for p in Path(root).rglob("*") if p.is_file()] if Path(root).exists() else []
