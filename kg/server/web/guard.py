"""Who may write through the workbench, and proof that a write came from its own pages.

The reading list is private. Three checks stand before every write:

- **Authority.** On a loopback address (127.0.0.1, ::1, localhost) the person at the
  keyboard is the reader, and writes need no token, as long as the request is
  addressed to a loopback host name (a page on another site that rebinds its DNS
  name to 127.0.0.1 is refused; :mod:`kg.server.security` refuses such reads too). On
  any other address writes need the server's token (``KG_SERVE_TOKEN`` or
  ``kg serve --token-file``): as ``Authorization: Bearer TOKEN``, or from a browser
  through the unlock page, which sets an HttpOnly, SameSite=Strict cookie holding a
  keyed hash of the token (never the token itself). Without a token such a server
  refuses every write.
- **Origin.** A browser write must say where it comes from, and that must be the
  server itself: an ``Origin`` equal to the server's own origin. A missing Origin and
  ``Origin: null`` (what a sandboxed frame or a ``data:`` page sends) are refused.
- **CSRF token.** Every page sets a random cookie (HttpOnly, SameSite=Strict) and puts
  a keyed hash of it (the form key) into its forms; a write must carry both, and they
  must match. A page on another origin can neither read the key (the workbench sends
  no CORS headers) nor, from another site, make the browser send the cookie.

A bearer-token client is not a browser (a browser cannot add that header to a
cross-origin request without a CORS preflight, which the workbench never grants) and
skips the last two checks.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from starlette.requests import Request

from kg.server.security import host_name, is_loopback

__all__ = ["COOKIE", "CSRF_COOKIE", "WriteDenied", "WriteGuard", "is_loopback"]

#: The cookie the unlock page sets.
COOKIE = "techkg_write"
#: The cookie every page sets, to which the form key is bound.
CSRF_COOKIE = "techkg_csrf"


class WriteDenied(Exception):
    """A write the guard refuses: the HTTP status, the reason and what to do."""

    def __init__(self, status: int, message: str, hint: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint


@dataclass
class WriteGuard:
    """The write policy of one running server."""

    #: The address the server listens on.
    host: str
    #: The server's token (``KG_SERVE_TOKEN``); None when it has none.
    token: str | None = field(default=None, repr=False)
    _secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def needs_token(self) -> bool:
        """Whether writes need the token (every address but loopback)."""
        return not self.loopback

    def _mac(self, purpose: bytes, value: str) -> str:
        return hmac.new(self._secret, purpose + b"\x00" + value.encode(), hashlib.sha256).hexdigest()

    def cookie_value(self) -> str:
        """What the unlock cookie holds: a keyed hash of the token, useless elsewhere."""
        assert self.token is not None
        return self._mac(b"unlock", self.token)

    # -- the CSRF cookie and the form key bound to it ----------------------------------

    @staticmethod
    def new_csrf_cookie() -> str:
        return secrets.token_urlsafe(32)

    @staticmethod
    def csrf_cookie(request: Request) -> str | None:
        """This browser's CSRF cookie, when it sent a well-formed one."""
        value = request.cookies.get(CSRF_COOKIE, "")
        return value if 20 <= len(value) <= 100 and value.replace("-", "").replace("_", "").isalnum() else None

    def form_key(self, cookie: str) -> str:
        """The form key of the browser holding ``cookie``."""
        return self._mac(b"form", cookie)

    def token_matches(self, given: str) -> bool:
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def _bearer(self, request: Request) -> str | None:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        return given.strip() if scheme.lower() == "bearer" and given.strip() else None

    def unlocked(self, request: Request) -> bool:
        """Whether this browser (or client) may write: loopback, the token, or the cookie."""
        if not self.needs_token:
            return True
        if self.token is None:
            return False
        bearer = self._bearer(request)
        if bearer is not None:
            return self.token_matches(bearer)
        cookie = request.cookies.get(COOKIE, "")
        return bool(cookie) and hmac.compare_digest(cookie.encode(), self.cookie_value().encode())

    def check_origin(self, request: Request, form_key: str | None) -> None:
        """Refuse a browser request that does not come from this server's own pages: its
        Origin must be this server, and its form key must match its CSRF cookie."""
        origin = request.headers.get("origin")
        if not origin or origin.strip().lower() == "null":
            raise WriteDenied(403, "the request does not say which page it comes from (no Origin, or Origin: null)",
                              "Change reading statuses from the workbench's own pages; scripts send "
                              "Authorization: Bearer TOKEN.")
        parts = urlsplit(origin.strip())
        host = request.headers.get("host", "").lower()
        if parts.scheme != request.url.scheme or parts.netloc.lower() != host:
            raise WriteDenied(403, f"a page on {origin[:100]} may not write to this graph",
                              "Change reading statuses from the workbench's own pages.")
        cookie = self.csrf_cookie(request)
        if cookie is None or not form_key or not hmac.compare_digest(form_key.encode(), self.form_key(cookie).encode()):
            raise WriteDenied(403, "the form does not carry this browser's form key",
                              "Reload the page and try again: the key belongs to the page's cookie and "
                              "changes when the server restarts.")

    def check_write(self, request: Request, form_key: str | None) -> None:
        """Raise :class:`WriteDenied` unless ``request`` may write."""
        if not self.needs_token:
            if not is_loopback(host_name(request.headers.get("host", ""))):
                raise WriteDenied(403, "writes on a loopback server must be addressed to a loopback host",
                                  "Open the workbench at http://127.0.0.1:PORT/ (or localhost).")
            if self.token is not None and (bearer := self._bearer(request)) is not None:
                if not self.token_matches(bearer):
                    raise WriteDenied(403, "the bearer token is not this server's token",
                                      "Send Authorization: Bearer TOKEN with the server's token.")
                return
            self.check_origin(request, form_key)
            return
        if self.token is None:
            raise WriteDenied(403, f"this server listens on {self.host} and has no token, so it refuses writes",
                              "Restart it with `kg serve --host HOST` and a token (KG_SERVE_TOKEN or "
                              "--token-file), or on 127.0.0.1 where no token is needed.")
        bearer = self._bearer(request)
        if bearer is not None:
            if not self.token_matches(bearer):
                raise WriteDenied(403, "the bearer token is not this server's token",
                                  "Send Authorization: Bearer TOKEN with the server's token.")
            return
        if not self.unlocked(request):
            raise WriteDenied(403, f"writes on {self.host} need the server's token",
                              "Unlock this browser with the token at /unlock, or send "
                              "Authorization: Bearer TOKEN.")
        self.check_origin(request, form_key)
