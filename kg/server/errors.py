"""The endpoint's HTTP errors: a status, a message and a hint for the client."""

from __future__ import annotations

from typing import Any

from kg.errors import KGError, NotFoundError, QueryError, RemoteStoreError, StoreError, StoreLockedError

__all__ = ["EndpointError", "from_kg_error"]


class EndpointError(Exception):
    """An HTTP answer other than success, with a message and a hint for the client.
    Picklable, so a query worker can send one back to the server."""

    def __init__(self, status: int, message: str, hint: str = "", *,
                 headers: dict[str, str] | None = None, kind: str = "EndpointError") -> None:
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
