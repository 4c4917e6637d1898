"""The server's access log, without what a query string may hold.

A URL's query string carries a client's query text, named-query parameters and, from
careless clients, ``?token=``: none of it belongs in a log. The access log keeps the
path and the parameter names, and replaces every value with ``…``.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl

__all__ = ["RedactQuery", "redact_access_log", "redact_target"]


def redact_target(target: str) -> str:
    """``/sparql?query=…&format=…`` for ``/sparql?query=SELECT…&format=json``."""
    path, sep, query = target.partition("?")
    if not sep:
        return target
    names = [name for name, _ in parse_qsl(query, keep_blank_values=True)]
    return path + "?" + "&".join(f"{name[:40]}=…" for name in names) if names else path + "?…"


class RedactQuery(logging.Filter):
    """Replace the values of the query string in uvicorn's access log records."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact_target(args[2]), *args[3:])
        return True


def redact_access_log() -> None:
    """Install :class:`RedactQuery` on uvicorn's access log (once)."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactQuery) for f in logger.filters):
        logger.addFilter(RedactQuery())
