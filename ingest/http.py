"""The one place where TechKG builds the ``httpx.Client`` that every source uses.

:func:`build_client` returns a client that

- names TechKG and a contact in its User-Agent (``--contact`` or ``KG_CONTACT``);
- has a deadline: ``timeout`` bounds each attempt as a whole, connection, headers and
  body together, so a server that drips one byte a second cannot hold a run (retries
  are counted apart, each with a deadline of its own);
- caps every body at ``max_body`` bytes *after* decompression (64 MiB by default,
  ``KG_MAX_RESPONSE_MIB`` to change it), decompressing in bounded steps, so a small
  gzip bomb never inflates in memory;
- retries connection errors, timeouts, truncated bodies and 5xx answers with
  exponential backoff and jitter, honouring ``Retry-After`` (and ``429``/``503`` with
  ``Retry-After``);
- is polite per host: a minimum interval between requests, optionally one connection
  at a time (arXiv asks for one request every 3 s and no parallel connections), and
  Zotero's ``Backoff`` header pauses the next request to that host;
- answers through the on-disk HTTP cache (:mod:`ingest.cache`) when one is given:
  conditional requests, and ``offline`` mode that never touches the network. A body
  is written to the cache only once its source has parsed it (:func:`commit_cache`;
  :func:`expect_json` does it for JSON), so a broken answer is never replayed.

Conventions every source follows (the Zotero sync included):

- Tokens come from the environment through :func:`ingest.secrets.token_from_env`, which
  registers them as secrets; :func:`ingest.secrets.redact` removes every registered
  secret from a text, and :func:`ingest.secrets.safe_url` strips credentials from a URL.
  Only safe URLs go into messages, the cache's metadata and ``prov:used``. The cache
  stores no request headers.
- Sources call :func:`send` rather than the client directly: it turns transport
  failures into :class:`kg.errors.IngestError` with a hint. :func:`expect_json`
  checks the content type and decodes JSON with a clear error for HTML error pages,
  wrong content types and malformed or truncated bodies.
- :func:`stats_for` gives the request counters (:class:`ingest.stats.HttpStats`) of a
  client built here (requests sent, retries, 304s, answers from the cache), for the run
  summary.
"""

from __future__ import annotations

import contextvars
import email.utils
import json
import os
import random
import re
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from ingest.secrets import redact, register_secret, registered_secrets, safe_url
from ingest.stats import HttpStats
from kg.errors import IngestError
from kg.redirects import SafeRedirects as _SafeRedirects
from kg.version import __version__

__all__ = [
    "HOMEPAGE",
    "Politeness",
    "RetryPolicy",
    "RetryingTransport",
    "build_client",
    "cache_for",
    "commit_cache",
    "max_body_default",
    "describe_status",
    "expect_json",
    "expect_xml",
    "retry_after_seconds",
    "send",
    "stats_for",
    "user_agent",
]

HOMEPAGE = "https://w3id.org/techkg"
#: The largest body an answer may have once decompressed, unless KG_MAX_RESPONSE_MIB says otherwise.
MAX_BODY = 64 << 20
#: The encodings TechKG asks for, and decodes in bounded steps.
ACCEPT_ENCODING = "gzip, deflate"
_RETRY_STATUSES = frozenset({500, 502, 503, 504})
_T = TypeVar("_T")


def user_agent(contact: str | None = None) -> str:
    """``TechKG/<version> (+homepage; mailto:contact)``: APIs ask clients to name themselves
    and give a way to reach whoever runs them."""
    who = f"+{HOMEPAGE}"
    if contact:
        contact = contact.strip()
        who += f"; mailto:{contact}" if "@" in contact and "://" not in contact else f"; {contact}"
    return f"TechKG/{__version__} ({who})"


# -- policies --------------------------------------------------------------------------


@dataclass(frozen=True)
class Politeness:
    """How gently to treat one host: at least ``min_interval`` seconds between the end
    of one request and the start of the next, and (``one_at_a_time``) no parallel
    connections."""

    min_interval: float = 0.0
    one_at_a_time: bool = False


#: arXiv's terms for its legacy APIs (query API, OAI-PMH): one request every 3 s,
#: one connection at a time.
ARXIV_POLITENESS = Politeness(min_interval=3.0, one_at_a_time=True)


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of connection errors, timeouts, truncated bodies and 5xx answers.

    The wait before retry ``n`` (0-based) is ``min(cap, base * 2**n)``, of which the
    upper half is random (jitter), unless the answer says ``Retry-After``. A
    ``Retry-After`` longer than ``max_retry_after`` is not waited for: the answer goes
    back to the caller, which reports it. ``sleep`` is injectable for tests.
    """

    attempts: int = 4
    base: float = 1.0
    cap: float = 60.0
    max_retry_after: float = 120.0
    sleep: Callable[[float], None] = time.sleep

    def backoff(self, attempt: int) -> float:
        delay = min(self.cap, self.base * 2.0**attempt)
        return delay / 2 + random.uniform(0, delay / 2)


_STATS: weakref.WeakKeyDictionary[httpx.Client, HttpStats] = weakref.WeakKeyDictionary()
_CACHES: weakref.WeakKeyDictionary[httpx.Client, Any] = weakref.WeakKeyDictionary()


def stats_for(client: httpx.Client) -> HttpStats:
    """The counters of a client made by :func:`build_client` (a fresh, unattached
    :class:`HttpStats` for any other client)."""
    return _STATS.get(client) or HttpStats()


def cache_for(client: httpx.Client) -> Any:
    """The :class:`ingest.cache.HttpCache` a client made by :func:`build_client` answers
    through, or None."""
    return _CACHES.get(client)


def retry_after_seconds(response: httpx.Response, header: str = "retry-after") -> float | None:
    """``Retry-After`` (or ``Backoff``) as seconds: a number or an HTTP date; None if absent."""
    raw = response.headers.get(header)
    if raw is None:
        return None
    raw = raw.strip()
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# -- transports --------------------------------------------------------------------------


class _HostGate:
    """When the next request to a host may start: per host, shared by every client in
    this process (or a transport's own, see :class:`RetryingTransport`)."""

    def __init__(self) -> None:
        self.connection = threading.Lock()
        self.state = threading.Lock()
        self.last_end = 0.0
        self.not_before = 0.0


_GATES: dict[str, _HostGate] = {}
_GATES_LOCK = threading.Lock()


def _gate(url: httpx.URL) -> _HostGate:
    key = f"{url.host}:{url.port or ''}"
    with _GATES_LOCK:
        return _GATES.setdefault(key, _HostGate())


def max_body_default() -> int:
    """``KG_MAX_RESPONSE_MIB`` in bytes, else :data:`MAX_BODY`."""
    raw = os.environ.get("KG_MAX_RESPONSE_MIB", "").strip()
    try:
        return max(1, int(float(raw) * (1 << 20))) if raw else MAX_BODY
    except ValueError:
        raise IngestError(f"KG_MAX_RESPONSE_MIB={raw!r} is not a number of MiB",
                          hint="Set it to e.g. 256, or unset it for the default of 64.") from None


#: When the attempt now being made must be over (time.monotonic()), or None.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("techkg_http_deadline", default=None)


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the request ran past its deadline")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream:
    """A network stream whose every read and write ends by the attempt's deadline."""

    def __init__(self, inner: Any, expired: type[Exception]) -> None:
        self.inner = inner
        self.expired = expired

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self.inner.read(max_bytes, _left(timeout, self.expired))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _left(timeout, self.expired))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, _left(timeout, self.expired)),
                               self.expired)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _DeadlineBackend:
    """httpcore's network backend with :class:`_DeadlineStream` streams (for httpcore
    and httpcore2 alike: ``expired`` is the library's own read timeout)."""

    def __init__(self, inner: Any, expired: type[Exception]) -> None:
        self.inner = inner
        self.expired = expired

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> _DeadlineStream:
        stream = self.inner.connect_tcp(host, port, _left(timeout, self.expired), local_address, socket_options)
        return _DeadlineStream(stream, self.expired)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        return _DeadlineStream(self.inner.connect_unix_socket(path, _left(timeout, self.expired), socket_options),
                               self.expired)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def with_deadlines(transport: _T) -> _T:
    """Give an ``httpx.HTTPTransport`` (or httpx2's) streams that honour the deadline
    :class:`RetryingTransport` sets for each attempt. Returns ``transport``."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is not None and not isinstance(backend, _DeadlineBackend):
        core = __import__(type(pool).__module__.split(".")[0])
        pool._network_backend = _DeadlineBackend(backend, core.ReadTimeout)  # type: ignore[union-attr]
    return transport


class ResponseTooLarge(IngestError):
    """An answer larger than the cap once decompressed."""


def _decoder(encoding: str, url: str) -> Any:
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(wbits=31)
    if encoding == "deflate":
        return zlib.decompressobj(wbits=15)
    raise IngestError(f"{url} answered in the encoding {encoding!r}, which TechKG did not ask for",
                      url=url, hint="The server ignores Accept-Encoding; nothing was written.")


def bounded_body(response: Any, limit: int, url: str) -> bytes:
    """The decoded body of a streamed ``response`` (from ``url``), decompressed in
    bounded steps; :class:`ResponseTooLarge` past ``limit`` bytes."""
    codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if len(codings) > 1:
        raise IngestError(f"{url} answered with stacked encodings ({', '.join(codings)})", url=url,
                          hint="TechKG decodes one gzip or deflate layer; nothing was written.")
    encoding = codings[0] if codings else ""
    decoder = _decoder(encoding, url)
    out = bytearray()

    def too_large() -> ResponseTooLarge:
        return ResponseTooLarge(
            f"the answer from {url} is larger than {limit:,} bytes" + (" once decompressed" if encoding else ""),
            url=url, hint="Nothing was written. If the answer is genuine, raise the cap with "
            "KG_MAX_RESPONSE_MIB (in MiB).")

    for raw in response.iter_raw():
        data = raw
        while data:
            if decoder is None:
                out += data
                data = b""
            else:
                try:
                    out += decoder.decompress(data, limit + 1 - len(out))
                except zlib.error:
                    if encoding != "deflate" or out:
                        raise IngestError(f"the compressed answer from {url} is corrupt", url=url,
                                          hint="Run again later; nothing was written.") from None
                    decoder = zlib.decompressobj(wbits=-15)  # raw deflate, as some servers send
                    continue
                data = decoder.unconsumed_tail
            if len(out) > limit:
                raise too_large()
    if decoder is not None:
        out += decoder.flush()
        if len(out) > limit:
            raise too_large()
    return bytes(out)


def _decoded(response: Any, content: bytes, request: Any) -> Any:
    """A response like ``response`` (to ``request``) holding the decoded ``content``."""
    headers = [(k, v) for k, v in response.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    extensions = {k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")}
    return type(response)(response.status_code, headers=headers, content=content, request=request,
                          extensions=extensions)


class RetryingTransport:
    """Spacing, one-at-a-time, ``Backoff`` and retries around a real transport: the loop
    that :class:`PoliteTransport` (httpx) and the Zotero transport (httpx2, pyzotero's
    fork of httpx with the same API) share. A subclass names its library's transport
    errors and says which statuses, which requests and which host state it retries by.

    The body is read here, inside the retry loop, so a connection reset or a body cut
    short is retried like a refused connection. A 429 or 503 answer with ``Retry-After``
    is retried after that wait, and so is any status in :attr:`retry_statuses` (after
    the backoff when it says nothing).
    """

    #: What the transport library raises when a connection fails: retried.
    transport_errors: tuple[type[Exception], ...] = (
        httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
    #: Statuses retried without ``Retry-After``.
    retry_statuses: frozenset[int] = _RETRY_STATUSES

    def __init__(self, inner: Any, *, politeness: Politeness, retry: RetryPolicy, stats: HttpStats,
                 own_gate: bool = False, retry_statuses: frozenset[int] | None = None,
                 deadline: float | None = None, max_body: int | None = None) -> None:
        self.inner = inner
        self.politeness = politeness
        self.retry = retry
        self.stats = stats
        self._own_gate = _HostGate() if own_gate else None
        if retry_statuses is not None:
            self.retry_statuses = retry_statuses
        #: Seconds one attempt may take, all of it (None: the request's read timeout).
        self.deadline = deadline
        #: Bytes a body may have once decompressed.
        self.max_body = max_body if max_body is not None else max_body_default()

    def gate(self, request: Any) -> _HostGate:
        """The spacing and ``Backoff`` state that ``request`` waits on: its host's, shared
        by every client in this process, or with ``own_gate`` this transport's alone."""
        return self._own_gate or _gate(request.url)

    def _deadline(self, request: Any) -> float:
        if self.deadline is not None:
            return self.deadline
        timeout = request.extensions.get("timeout", {}).get("read")
        return float(timeout) if timeout else 300.0

    def retryable(self, request: Any) -> bool:
        """Whether ``request`` may be sent again: GET, HEAD and OPTIONS, and a POST with
        the ``"idempotent": True`` request extension (GraphQL queries carry it)."""
        return request.method in ("GET", "HEAD", "OPTIONS") or bool(request.extensions.get("idempotent"))

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self.stats.waited += seconds
            self.stats.waits.append(seconds)
            self.retry.sleep(seconds)

    def _turn(self, gate: _HostGate) -> None:
        with gate.state:
            ready = max(gate.last_end + self.politeness.min_interval, gate.not_before)
        self._wait(ready - time.monotonic())

    def handle_request(self, request: Any) -> Any:
        gate = self.gate(request)
        attempts = max(1, self.retry.attempts) if self.retryable(request) else 1
        request.read()
        for attempt in range(attempts):
            last = attempt == attempts - 1
            if self.politeness.one_at_a_time:
                gate.connection.acquire()
            try:
                self._turn(gate)
                self.stats.requests += 1
                token = _DEADLINE.set(time.monotonic() + self._deadline(request))
                try:
                    streamed = self.inner.handle_request(request)
                    try:
                        body = bounded_body(streamed, self.max_body, safe_url(request.url))
                        response = _decoded(streamed, body, request)
                    finally:
                        streamed.close()
                except self.transport_errors:
                    if last:
                        raise
                    response = None
                finally:
                    _DEADLINE.reset(token)
                    with gate.state:
                        gate.last_end = time.monotonic()
                if response is not None:
                    if response.content:
                        self.stats.bodies += 1
                        self.stats.bytes += len(response.content)
                    backoff = retry_after_seconds(response, "backoff")
                    if backoff:
                        with gate.state:
                            gate.not_before = max(gate.not_before, time.monotonic() + backoff)
            finally:
                if self.politeness.one_at_a_time:
                    gate.connection.release()
            if response is None:
                self.stats.retries += 1
                self._wait(self.retry.backoff(attempt))
                continue
            wanted = retry_after_seconds(response)
            should_retry = response.status_code in self.retry_statuses or (
                response.status_code in (429, 503) and wanted is not None)
            if not should_retry or last:
                return response
            if wanted is not None and wanted > self.retry.max_retry_after:
                return response
            self.stats.retries += 1
            self._wait(wanted if wanted is not None else self.retry.backoff(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        self.inner.close()


class PoliteTransport(RetryingTransport, httpx.BaseTransport):
    """The :class:`RetryingTransport` of every httpx client built here: GET, HEAD, OPTIONS
    and idempotent POSTs retried, per-host spacing and ``Backoff``."""


class _ProxyRouter(httpx.BaseTransport):
    """Sends requests through ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY`` unless the host
    is loopback or matches ``NO_PROXY`` (the client itself does not read the environment,
    so that every request goes through the politeness, retry and cache layers)."""

    def __init__(self, direct: httpx.BaseTransport, proxies: dict[str, str], no_proxy: list[str]) -> None:
        self.direct = direct
        self.proxied = {scheme: with_deadlines(httpx.HTTPTransport(retries=0, proxy=url))
                        for scheme, url in proxies.items()}
        self.no_proxy = no_proxy

    def _bypass(self, host: str) -> bool:
        if host in ("localhost", "127.0.0.1", "::1") or "*" in self.no_proxy:
            return True
        return any(host == d.lstrip(".") or host.endswith("." + d.lstrip(".")) for d in self.no_proxy if d)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        proxy = self.proxied.get(request.url.scheme) or self.proxied.get("all")
        if proxy is None or self._bypass(request.url.host):
            return self.direct.handle_request(request)
        return proxy.handle_request(request)

    def close(self) -> None:
        self.direct.close()
        for transport in self.proxied.values():
            transport.close()


def _network_transport() -> httpx.BaseTransport:
    direct = with_deadlines(httpx.HTTPTransport(retries=0))
    env = {k.lower(): v for k, v in os.environ.items() if k.lower().endswith("_proxy") and v.strip()}
    proxies = {scheme: env[f"{scheme}_proxy"] for scheme in ("https", "http", "all") if f"{scheme}_proxy" in env}
    if not proxies:
        return direct
    no_proxy = [d.strip() for d in env.get("no_proxy", "").split(",")]
    return _ProxyRouter(direct, proxies, no_proxy)


# -- credentials never follow a redirect to another origin --------------------------------


class SafeRedirects(_SafeRedirects):
    """:class:`kg.redirects.SafeRedirects` (the one rule), with every secret registered in
    :mod:`ingest.secrets` taken for a credential wherever it appears in a header."""

    def redirect_secrets(self) -> Iterable[str]:
        return registered_secrets()


class Client(SafeRedirects, httpx.Client):
    """``httpx.Client`` whose redirects never carry credentials to another origin."""


# -- the client ---------------------------------------------------------------------------


def build_client(
    source: str,
    *,
    api_url: str | None = None,
    token: str | None = None,
    token_scheme: str = "Bearer",
    contact: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | httpx.Timeout = 30.0,
    retry: RetryPolicy | None = None,
    politeness: Politeness | None = None,
    cache: Any = None,
    offline: bool = False,
    transport: httpx.BaseTransport | None = None,
    retry_statuses: frozenset[int] | None = None,
    max_body: int | None = None,
) -> httpx.Client:
    """An ``httpx.Client`` for ``source`` (``arxiv``, ``github``, ``zotero`` ...).

    ``api_url`` becomes the base URL; ``token`` is sent as ``Authorization:
    <token_scheme> <token>`` and registered as a secret. ``cache`` is an
    :class:`ingest.cache.HttpCache`; with ``offline=True`` every answer comes from it
    and a missing one raises :class:`kg.errors.OfflineError`. ``transport`` replaces
    the network transport (tests pass ``httpx.MockTransport`` for pure-logic checks).
    ``timeout`` is the deadline of each attempt as a whole; ``max_body`` caps every
    decoded body (default :func:`max_body_default`).
    Redirects are followed; one that leaves the origin carries no credential header
    (:class:`SafeRedirects`: ``Authorization``, ``x-api-key``, any header named like a key or
    token or holding a registered secret). Proxies come from ``HTTPS_PROXY``/``HTTP_PROXY``/
    ``ALL_PROXY`` and ``NO_PROXY``.
    ``retry_statuses`` replaces the statuses retried without ``Retry-After`` (500, 502,
    503, 504): Semantic Scholar's 429 often says nothing, and is retried with backoff.
    """
    stats = HttpStats()
    inner: httpx.BaseTransport = transport or _network_transport()
    deadline = timeout if isinstance(timeout, int | float) else None
    polite: httpx.BaseTransport = PoliteTransport(
        inner, politeness=politeness or Politeness(), retry=retry or RetryPolicy(), stats=stats,
        retry_statuses=retry_statuses, deadline=deadline, max_body=max_body)
    if cache is not None or offline:
        from ingest.cache import CacheTransport

        if cache is None:
            raise IngestError("offline mode needs a cache", source=source,
                              hint="Give --cache-dir, or drop --offline.")
        polite = CacheTransport(polite, cache=cache, offline=offline, stats=stats, source=source)
    all_headers = {"User-Agent": user_agent(contact), "Accept-Encoding": ACCEPT_ENCODING}
    all_headers.update(headers or {})
    if token:
        register_secret(token)
        all_headers["Authorization"] = f"{token_scheme} {token}".strip()
    client = Client(
        base_url=api_url.rstrip("/") if api_url else "",
        headers=all_headers,
        timeout=timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        follow_redirects=True,
        transport=polite,
        trust_env=False,
    )
    _STATS[client] = stats
    if cache is not None:
        _CACHES[client] = cache
    return client


# -- requests and answers -------------------------------------------------------------------


def _describe(exc: Exception) -> tuple[str, str]:
    if isinstance(exc, httpx.TimeoutException):
        return "timed out", "The server is slow or unreachable; try again later, or raise --timeout."
    if isinstance(exc, httpx.ConnectError):
        return "could not connect", "Check the network and --api-url."
    if isinstance(exc, httpx.RemoteProtocolError):
        return ("the connection closed before the answer was complete (truncated or malformed response)",
                "The server or a proxy cut the answer short; try again later.")
    if isinstance(exc, httpx.NetworkError):
        return "the connection failed (reset by the server)", "Try again later; check any proxy in between."
    return type(exc).__name__, "Check --api-url and try again."


def send(client: httpx.Client, method: str, url: str, *, source: str, **kwargs: Any) -> httpx.Response:
    """``client.request(method, url, ...)`` with transport failures (after the client's
    retries) turned into :class:`IngestError` naming the source and the safe URL."""
    before = stats_for(client).retries
    try:
        return client.request(method, url, **kwargs)
    except httpx.HTTPError as exc:
        try:
            full = exc.request.url
        except RuntimeError:
            full = client.base_url.join(url)
        what, hint = _describe(exc)
        retries = stats_for(client).retries - before
        tried = f" (tried {retries + 1} times)" if retries else ""
        detail = redact(str(exc))
        detail = f": {detail}" if detail and detail not in what else ""
        raise IngestError(f"{source}: {method} {safe_url(full)} {what}{tried}{detail}",
                          source=source, url=safe_url(full), hint=hint + " Nothing was written.") from None


def _snippet(response: httpx.Response) -> str:
    text = response.content[:2000].decode("utf-8", "replace")
    title = re.search(r"(?is)<title>(.*?)</title>", text)
    if title:
        text = title.group(1)
    text = re.sub(r"<[^>]+>", " ", text)
    return redact(" ".join(text.split())[:120])


def _unexpected(response: httpx.Response, *, source: str, url: str, expected: str, ctype: str,
                html: bool) -> IngestError:
    """The error for an answer that is not the ``expected`` format but content type ``ctype``
    (or, ``html``, what looks like an error page)."""
    kind = "an HTML page" if html else (ctype or "no content type")
    snippet = _snippet(response)
    return IngestError(
        f"{source}: expected {expected} from {url} but got {kind} (HTTP {response.status_code}"
        + (f": {snippet!r})" if snippet else ")"),
        source=source, url=url, status=response.status_code,
        hint="The API may be down or behind a login or proxy page, or --api-url points at a web "
             "page rather than the API. Check it and run again; nothing was written.")


def expect_json(response: httpx.Response, *, source: str) -> Any:
    """The decoded JSON body, or an :class:`IngestError` saying what came instead
    (an HTML error page, another content type, malformed or truncated JSON)."""
    url = safe_url(response.request.url)
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if "json" not in ctype:
        head = response.content[:512].lower()
        html = "html" in ctype or b"<html" in head or b"<!doctype html" in head
        raise _unexpected(response, source=source, url=url, expected="JSON", ctype=ctype, html=html)
    try:
        data = json.loads(response.content)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IngestError(
            f"{source}: the JSON from {url} is malformed or truncated ({exc}; {len(response.content)} bytes)",
            source=source, url=url, status=response.status_code,
            hint="Run again later; if it persists the API (or --api-url) is not answering properly. "
                 "Nothing was written.") from None
    commit_cache(response)
    return data


def commit_cache(response: httpx.Response) -> None:
    """The source parsed ``response``: now the cache may keep it (see :mod:`ingest.cache`)."""
    keep = response.extensions.get("techkg_cache_put")
    if keep is not None:
        keep()


def expect_xml(response: httpx.Response, *, source: str) -> bytes:
    """The body of an XML answer, or an :class:`IngestError` when the content type says
    it is something else (JSON, an HTML error page). Parse it with :mod:`ingest.safexml`."""
    url = safe_url(response.request.url)
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    body = response.content
    looks_html = b"<html" in body[:512].lower()
    if ("xml" not in ctype and "atom" not in ctype) or looks_html:
        if not ctype and body.lstrip()[:5] in (b"<?xml", b"<feed", b"<OAI-") and not looks_html:
            return body
        raise _unexpected(response, source=source, url=url, expected="XML", ctype=ctype,
                          html="html" in ctype or looks_html)
    return body


def describe_status(response: httpx.Response, *, source: str, what: str) -> IngestError:
    """An :class:`IngestError` for an unexpected HTTP status, with the server's message."""
    url = safe_url(response.request.url)
    message = ""
    try:
        data = response.json()
        if isinstance(data, dict):
            message = str(data.get("message") or data.get("error") or "")
    except (ValueError, UnicodeDecodeError):
        message = _snippet(response)
    hint = {
        401: "The token was refused: check it (GITHUB_TOKEN / ZOTERO_API_KEY) or run without it.",
        403: "Access was refused; check the token's scopes, or wait if this is a rate limit.",
        404: "Check the name and --api-url.",
    }.get(response.status_code, "Run again later; if it persists check --api-url.")
    return IngestError(f"{source}: {what} failed with HTTP {response.status_code} at {url}"
                       + (f": {redact(message)}" if message else ""),
                       source=source, url=url, status=response.status_code, hint=hint)
