"""The endpoint's HTTP errors: a status, a message and a hint for the client."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kg.errors import KGError, NotFoundError, QueryError, RemoteStoreError, StoreError, StoreLockedError

if TYPE_CHECKING:
    from kg.sparqlguard import QueryRefused

__all__ = ["EndpointError", "from_kg_error", "refused", "without_paths"]

#: A file system path where it does not continue a URL or an IRI: three or more parts
#: (``/home/me/store/readers/view-…``), or two under a usual root (``/tmp/kg-x``), or under ``~``.
_PART = r"[^\s/'\"<>()\[\]{},;]+"
_PATH = re.compile(
    rf"(?<![\w:/.<~-])(?:(?:\.{{1,2}})?/{_PART}/{_PART}/(?:{_PART}/?)*"
    rf"|/(?:tmp|home|root|var|usr|opt|srv|mnt|media|run|private|Users|work|data|proc|dev|etc)/{_PART}/?"
    rf"|~/(?:{_PART}/?)*)")


def without_paths(text: str) -> str:
    """``text`` with every file system path replaced: what a client is told never shows
    where the server keeps its files."""
    return _PATH.sub("(a path on the server)", text)


class EndpointError(Exception):
    """An HTTP answer other than success, with a message and a hint for the client.
    Picklable, so a query worker can send one back to the server."""

    def __init__(self, status: int, message: str, hint: str = "", *,
                 headers: dict[str, str] | None = None, kind: str = "EndpointError") -> None:
        message, hint = without_paths(message), without_paths(hint)
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint
        self.headers = headers or {}
        self.kind = kind

    def __reduce__(self) -> tuple[Any, ...]:
        return (EndpointError, (self.status, self.message, self.hint), {"headers": self.headers, "kind": self.kind})


def from_kg_error(error: KGError, *, writing: bool = False) -> EndpointError:
    """The HTTP status of a TechKG error: 404 for what is not there, 400 for a bad query,
    502 for a remote store's failure, 503 for a locked store."""
    if isinstance(error, NotFoundError):
        status = 404
    elif isinstance(error, QueryError):  # ParameterError included
        status = 400
    elif isinstance(error, RemoteStoreError):
        status = 502
    elif isinstance(error, StoreLockedError):
        status = 503
    elif isinstance(error, StoreError):
        status = 400 if writing else 500
    else:
        status = 400
    return EndpointError(status, error.message, error.hint, kind=type(error).__name__)


def refused(error: QueryRefused) -> EndpointError:
    """The answer to a text refused before it ran: 413 too large, 403 a host it may not
    contact, 400 otherwise (too deep)."""
    status = 413 if error.reason == "size" else 403 if error.reason in ("service", "load") else 400
    return EndpointError(status, error.message, error.hint, kind="QueryRefused")
