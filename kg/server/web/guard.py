"""Who may write through the workbench, and proof that a write came from its own pages.

The reading list is private. Two checks stand before every write:

- **Authority.** On a loopback address (127.0.0.1, ::1, localhost) the person at the
  keyboard is the reader, and writes need no token, as long as the request is
  addressed to a loopback host name (a page on another site that rebinds its DNS
  name to 127.0.0.1 is refused). On any other address writes need the server's
  token (``kg serve --token``): as ``Authorization: Bearer TOKEN``, or from a browser
  through the unlock page, which sets an HttpOnly, SameSite=Strict cookie holding a
  keyed hash of the token (never the token itself). Without a token such a server
  refuses every write.
- **Origin.** A browser write must carry the server's form key, a random value made
  when the server starts and put into every form it renders, and its ``Origin`` (when
  sent) must be the server itself. A page elsewhere can neither read the key nor
  pass the origin check, so it cannot make the reader's browser write (CSRF). A
  bearer-token client is not a browser and skips this check.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from starlette.requests import Request

__all__ = ["COOKIE", "WriteDenied", "WriteGuard", "is_loopback"]

#: The cookie the unlock page sets.
COOKIE = "techkg_write"
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


def _host_name(authority: str) -> str:
    """The host of a ``Host`` header value, without the port."""
    authority = authority.strip()
    if authority.startswith("["):
        return authority[1:].split("]", 1)[0]
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


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
    #: The server's token (``kg serve --token``); None when it has none.
    token: str | None = field(default=None, repr=False)
    #: The key every form carries; random per server start.
    form_key: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    _secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def needs_token(self) -> bool:
        """Whether writes need the token (every address but loopback)."""
        return not self.loopback

    def cookie_value(self) -> str:
        """What the unlock cookie holds: a keyed hash of the token, useless elsewhere."""
        assert self.token is not None
        return hmac.new(self._secret, self.token.encode(), hashlib.sha256).hexdigest()

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
        """Refuse a browser request that does not come from this server's own pages."""
        if not form_key or not hmac.compare_digest(form_key.encode(), self.form_key.encode()):
            raise WriteDenied(403, "the form does not carry this server's form key",
                              "Reload the page and try again: the key changes every time the server starts.")
        origin = request.headers.get("origin")
        if origin and origin != "null":
            parts = urlsplit(origin)
            if parts.netloc.lower() != request.headers.get("host", "").lower():
                raise WriteDenied(403, f"a page on {origin} may not write to this graph",
                                  "Change reading statuses from the workbench's own pages.")

    def check_write(self, request: Request, form_key: str | None) -> None:
        """Raise :class:`WriteDenied` unless ``request`` may write."""
        if not self.needs_token:
            if not is_loopback(_host_name(request.headers.get("host", ""))):
                raise WriteDenied(403, "writes on a loopback server must be addressed to a loopback host",
                                  "Open the workbench at http://127.0.0.1:PORT/ (or localhost).")
            self.check_origin(request, form_key)
            return
        if self.token is None:
            raise WriteDenied(403, f"this server listens on {self.host} and has no token, so it refuses writes",
                              "Restart it with `kg serve --host HOST --token TOKEN` (or KG_SERVE_TOKEN), "
                              "or on 127.0.0.1 where no token is needed.")
        bearer = self._bearer(request)
        if bearer is not None:
            if not self.token_matches(bearer):
                raise WriteDenied(403, "the bearer token is not this server's token",
                                  "Send Authorization: Bearer TOKEN with the token `kg serve --token` was given.")
            return
        if not self.unlocked(request):
            raise WriteDenied(403, f"writes on {self.host} need the server's token",
                              "Unlock this browser with the token at /unlock, or send "
                              "Authorization: Bearer TOKEN.")
        self.check_origin(request, form_key)
