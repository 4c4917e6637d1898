"""The one error tree of TechKG.

Every error a user can cause or meet derives from :class:`KGError`. Each carries a
``hint`` that says what to do about it; the CLI prints the message and the hint and
exits non-zero, and never a traceback for these.

    KGError
     ├── StoreError                  the store cannot be opened, read or written
     │    ├── StoreLockedError       another process holds the embedded store
     │    └── RemoteStoreError       a SPARQL endpoint answered with an error
     ├── DataError                   an input file is malformed
     │    ├── CatalogError           a catalog TOML file (file, line, field)
     │    ├── ReadingListError       a markdown reading list (file, line, expected)
     │    └── RDFImportError         an RDF dump given to ``kg import rdf``
     ├── ValidationError             SHACL violations in the graph
     ├── ProtectedGraphError         a command would replace a graph TechKG or the user owns
 ├── StatusError                 a reading status that is empty, or a typo of a known one
 ├── NotFoundError               an unknown technique, paper or node
     ├── QueryError                  a SPARQL query failed or a named query is misused
     │    └── ParameterError         a named-query parameter is missing or mistyped
     ├── IngestError                 a source API answered badly (source, url, status)
     │    ├── RateLimitError         the API's rate limit is exhausted
     │    └── OfflineError           ``--offline`` and the cache lacks a response
     ├── SyncError                   a two-way sync could not complete
     ├── ExportError                 an export cannot be written
     ├── AnalyticsError              the DuckDB analytics file or an SQL query on it failed
     ├── SearchError                 the search index cannot be made or read, or a search is malformed
     └── KernelError                 a reference kernel could not be run
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AnalyticsError",
    "CatalogError",
    "DataError",
    "ExportError",
    "IngestError",
    "KGError",
    "KernelError",
    "NotFoundError",
    "OfflineError",
    "ParameterError",
    "ProtectedGraphError",
    "QueryError",
    "RDFImportError",
    "RateLimitError",
    "ReadingListError",
    "RemoteStoreError",
    "SearchError",
    "StatusError",
    "StoreError",
    "StoreLockedError",
    "SyncError",
    "ValidationError",
]


class KGError(Exception):
    """Base class of every error TechKG reports to a user."""

    default_hint: str = ""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, object]:
        """The JSON error shape used by ``--format json`` and the HTTP server."""
        return {"ok": False, "error": self.message, "hint": self.hint, "type": type(self).__name__}


class StoreError(KGError):
    """The store cannot be opened, read or written."""


class StoreLockedError(StoreError):
    """Another process holds the embedded store's lock."""


class RemoteStoreError(StoreError):
    """A remote SPARQL endpoint answered with an error."""

    def __init__(
        self, message: str, *, url: str = "", status: int | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.url = url
        self.status = status


class DataError(KGError):
    """An input file is malformed. ``path`` and ``line`` locate the problem."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        where = path or ""
        if path and line:
            where = f"{path}:{line}"
        super().__init__(f"{where}: {message}" if where else message, hint=hint)
        self.path = path
        self.line = line


class CatalogError(DataError):
    """A catalog data file is malformed or refers to something that does not exist."""


class ReadingListError(DataError):
    """A markdown reading list does not follow the expected table format."""


class RDFImportError(DataError):
    """An RDF dump could not be parsed or loaded."""


class ValidationError(KGError):
    """The graph violates the SHACL shapes. ``violations`` lists them."""

    def __init__(self, message: str, *, violations: Sequence[object] = (), hint: str | None = None):
        super().__init__(message, hint=hint)
        self.violations = list(violations)


class ProtectedGraphError(KGError):
    """A command would replace or drop a graph it must not: one built from the package,
    the user's own, or TechKG's bookkeeping."""


class StatusError(KGError):
    """A reading status that is empty, or not a known one (custom statuses need --custom)."""


class NotFoundError(KGError):
    """A technique, paper or node that the graph does not hold."""

    def __init__(self, message: str, *, suggestions: Sequence[str] = (), hint: str | None = None):
        if suggestions and hint is None:
            hint = "Did you mean: " + ", ".join(suggestions) + "?"
        super().__init__(message, hint=hint)
        self.suggestions = list(suggestions)


class QueryError(KGError):
    """A SPARQL query failed, or a named query does not exist."""


class ParameterError(QueryError):
    """A named-query parameter is missing, unknown or of the wrong type."""

    def __init__(self, message: str, *, parameter: str, expected: str = "", hint: str | None = None):
        super().__init__(message, hint=hint)
        self.parameter = parameter
        self.expected = expected


class IngestError(KGError):
    """A source API answered badly. Carries the source name, URL and HTTP status."""

    def __init__(
        self,
        message: str,
        *,
        source: str = "",
        url: str = "",
        status: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.source = source
        self.url = url
        self.status = status


class RateLimitError(IngestError):
    """The API's rate limit is exhausted; ``reset_at`` says when it refills."""

    def __init__(self, message: str, *, reset_at: str = "", **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.reset_at = reset_at


class OfflineError(IngestError):
    """``--offline`` was given and the cache does not hold a needed response."""


class SyncError(KGError):
    """A two-way sync could not complete; nothing was half-written."""


class ExportError(KGError):
    """An export cannot be written (existing file, bad path, unknown format)."""


class AnalyticsError(KGError):
    """The DuckDB analytics file cannot be built, opened or written, or an SQL query on it
    failed; the message carries DuckDB's own."""


class SearchError(KGError):
    """The full-text search index cannot be made, opened or written, or a search (its query
    or a filter) is malformed."""


class KernelError(KGError):
    """A reference kernel could not be run (missing dependency, bad arguments)."""
