"""Credentials never follow a redirect to another origin: the one rule for every HTTP
client TechKG makes (the sources' in :mod:`ingest.http`, pyzotero's, the remote store's in
:mod:`kg.store.remote_read`).

httpx by itself drops ``Authorization`` alone on a redirect to another origin, and keeps
it for an http → https redirect of the same host. Here a redirect that changes the
scheme, host or port carries no credential header at all: ``Authorization``,
``x-api-key``, cookies, any header whose name says it holds a key or token, and any
header whose value holds one of the client's secrets. A redirect within the origin keeps
them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import httpx

__all__ = ["CREDENTIAL_HEADERS", "SafeClient", "SafeRedirects", "origin", "strip_credentials"]

#: Request headers that carry credentials by name; a header is also taken for one when its
#: name says so (:data:`_CREDENTIAL_NAME`) or its value holds a secret of the client.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "zotero-api-key",
                                "private-token", "x-auth-token", "x-access-token", "api-key", "apikey"})
_CREDENTIAL_NAME = re.compile(r"(?i)auth|token|key|secret|session|cookie|password|credential")


def origin(url: Any) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, the port filled in for http and https."""
    parts = urlsplit(str(url))
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def strip_credentials(headers: Any, source: Any, target: Any, *, secrets: Iterable[str] = ()) -> None:
    """Remove every credential header from ``headers`` (httpx's or httpx2's) when a redirect
    from ``source`` to ``target`` leaves the origin: by its name, or because its value holds
    one of ``secrets``."""
    if origin(source) == origin(target):
        return
    known = [s for s in secrets if s]
    for name in {n for n, v in headers.multi_items() if n.lower() in CREDENTIAL_HEADERS
                 or _CREDENTIAL_NAME.search(n) or any(secret in v for secret in known)}:
        del headers[name]


class SafeRedirects:
    """Mixed into a client class of httpx or httpx2 (before the client class): a redirect
    keeps the request's credential headers only while it stays on the same origin.
    A subclass that knows secrets by value names them in :meth:`redirect_secrets`."""

    def redirect_secrets(self) -> Iterable[str]:
        """Secrets a header value may hold, whatever the header's name."""
        return ()

    def _redirect_headers(self, request: Any, url: Any, method: str) -> Any:
        headers = super()._redirect_headers(request, url, method)  # type: ignore[misc]
        strip_credentials(headers, request.url, url, secrets=self.redirect_secrets())
        return headers


class SafeClient(SafeRedirects, httpx.Client):
    """``httpx.Client`` whose redirects never carry credentials to another origin."""
