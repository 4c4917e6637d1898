"""Who may talk to the server, checked on every request before any route runs.

- **Host.** A page on another site can rebind its own DNS name to 127.0.0.1 and then
  talk to the server as a same-origin page of that name (DNS rebinding). Every request,
  reads included, must therefore be addressed to a name the server knows: a loopback
  name or address (``localhost``, ``*.localhost``, ``127.0.0.1``, ``[::1]``), an IP
  address when the server listens beyond loopback (a rebinding page cannot make the
  browser send an IP literal of its choosing as its own host), or a name given with
  ``kg serve --allow-host``. Anything else gets 400 before any route runs.
- **CORS.** The workbench never answers cross-origin reads: its pages hold the private
  reading list and the form keys. The machine endpoints (``/sparql``, ``/store``,
  ``/queries``) allow the origins given with ``--cors-origin`` and, by default, none.
- **URL length.** A request line longer than :data:`MAX_URL_BYTES` gets 414 with a hint
  to POST the query instead. The HTTP server reads request lines up to
  :data:`MAX_REQUEST_LINE_BYTES`, so the client reads that answer; beyond it the HTTP
  server itself answers 400 and closes the connection.
"""

from __future__ import annotations

import ipaddress

from starlette.middleware.cors import CORSMiddleware
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ENDPOINT_PATHS", "MAX_REQUEST_LINE_BYTES", "MAX_URL_BYTES", "EndpointCORS", "HostGuard", "URLLimit",
           "host_name", "is_loopback"]

#: The paths CORS may apply to: the SPARQL endpoint, the Graph Store and the named queries.
ENDPOINT_PATHS = ("/sparql", "/store", "/queries")
#: The longest path and query string answered, 414 beyond: room for the largest query the
#: guard accepts (kg.sparqlguard.QueryLimits, 256 KiB) even when every byte is percent-encoded.
MAX_URL_BYTES = 1 << 20
#: What the HTTP server reads of a request's head before it gives up (h11's limit), set
#: above MAX_URL_BYTES so that a long URL is read whole and answered with 414.
MAX_REQUEST_LINE_BYTES = 2 << 20
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(authority: str) -> str:
    """The host of a ``Host`` header value, lower-case, without the port or brackets."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1:].split("]", 1)[0]
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class _Gate:
    """A middleware that may refuse a request (with the response :meth:`refusal` gives)
    before the app sees it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def refusal(self, scope: Scope) -> Response | None:
        """The response that refuses this request, or None to let it through."""
        raise NotImplementedError

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self.refusal(scope)
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)


class HostGuard(_Gate):
    """Refuse requests addressed to a host name the server does not answer to."""

    def __init__(self, app: ASGIApp, *, bind_host: str, allowed_hosts: tuple[str, ...] = ()) -> None:
        super().__init__(app)
        self.beyond_loopback = not is_loopback(bind_host)
        self.allowed = {host_name(h) for h in allowed_hosts}
        if not is_loopback(bind_host) and not _is_ip(bind_host.strip("[]")) and bind_host not in ("", "0.0.0.0", "::"):
            self.allowed.add(host_name(bind_host))

    def allows(self, authority: str) -> bool:
        name = host_name(authority)
        if not name:
            return False
        if is_loopback(name) or name.endswith(".localhost") or name in self.allowed:
            return True
        return self.beyond_loopback and _is_ip(name)

    def refusal(self, scope: Scope) -> Response | None:
        if scope["type"] not in ("http", "websocket"):
            return None
        headers = dict(scope.get("headers") or [])
        authority = headers.get(b"host", b"").decode("latin-1")
        if self.allows(authority):
            return None
        shown = authority[:100] or "(none)"
        return PlainTextResponse(
            f"this server does not answer to the host {shown!r}\n"
            "hint: Open it at http://127.0.0.1:PORT/ (or localhost); for another name, start it with "
            "`kg serve --allow-host NAME`.\n", status_code=400)


class URLLimit(_Gate):
    """Refuse a URL longer than :data:`MAX_URL_BYTES` with 414 and the way out (POST)."""

    def __init__(self, app: ASGIApp, *, limit: int = MAX_URL_BYTES) -> None:
        super().__init__(app)
        self.limit = limit

    def refusal(self, scope: Scope) -> Response | None:
        if scope["type"] != "http":
            return None
        size = len(scope.get("raw_path") or scope.get("path", "").encode()) + len(scope.get("query_string", b""))
        if size <= self.limit:
            return None
        return PlainTextResponse(
            f"the request URL is {size:,} bytes, longer than the server's limit of {self.limit:,}\n"
            "hint: Send a long query with POST: the body as application/sparql-query, or a form "
            "field query=... (application/x-www-form-urlencoded). Queries over 256 KiB are refused "
            "either way; split them or load the data with kg import rdf.\n", status_code=414)


class EndpointCORS:
    """CORS for the machine endpoints and the origins the user allows; nothing else."""

    def __init__(self, app: ASGIApp, *, origins: tuple[str, ...]) -> None:
        self.app = app
        self.cors: ASGIApp | None = CORSMiddleware(
            app, allow_origins=list(origins), allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["Accept", "Content-Type", "Authorization"], max_age=600,
        ) if origins else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if self.cors is not None and any(path == p or path.startswith(p + "/") for p in ENDPOINT_PATHS):
            await self.cors(scope, receive, send)
            return
        await self.app(scope, receive, send)
