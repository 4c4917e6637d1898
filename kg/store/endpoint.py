"""Talking to a SPARQL endpoint: the ``--store`` spec of a remote store
(:func:`parse_spec`, :class:`EndpointSpec`), URLs without their passwords
(:func:`redact`), and what the endpoint answers (media types, a streamed body).
The store itself is :class:`kg.store.remote.RemoteStore`.
"""


from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
import pyoxigraph as ox

from kg.errors import StoreError

__all__ = ["ACCEPT", "ENDPOINT_HINT", "GRAPH_TYPES", "RESULT_TYPES", "EndpointSpec", "ResponseReader", "media_type",
           "page_title", "parse_spec", "redact"]

#: The Accept header per query form: what the form can answer, preferred first.
ACCEPT = {
    "SELECT": "application/sparql-results+json, application/sparql-results+xml;q=0.9, "
              "text/tab-separated-values;q=0.5",
    "ASK": "application/sparql-results+json, application/sparql-results+xml;q=0.9",
    "CONSTRUCT": "application/n-triples, text/turtle;q=0.9, application/rdf+xml;q=0.5, application/ld+json;q=0.4",
}
ACCEPT["DESCRIBE"] = ACCEPT["CONSTRUCT"]
RESULT_TYPES = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "application/xml": ox.QueryResultsFormat.XML,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
GRAPH_TYPES = {
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/plain": ox.RdfFormat.N_TRIPLES,
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD,
    "application/n-quads": ox.RdfFormat.N_QUADS,
    "application/trig": ox.RdfFormat.TRIG,
}
ENDPOINT_HINT = (
    "Give the query URL itself, e.g. http://localhost:7878/query (Oxigraph server), "
    "http://localhost:8890/sparql (Virtuoso), http://localhost:3030/DATASET/query (Fuseki) "
    "or http://127.0.0.1:7879/sparql (kg serve)."
)


@dataclass(frozen=True)
class EndpointSpec:
    """The URLs and options of a remote store, parsed from a ``--store`` value."""

    query: str
    update: str
    gsp: str | None = None
    union: bool | None = None
    timeout: float = 300.0


def _check_url(url: str, key: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise StoreError(
            f"the store's {key} URL {redact(url)!r} is not an http(s) URL",
            hint="Write the store as QUERY_URL[;update=URL][;gsp=URL], e.g. "
            "http://localhost:7878/query;update=/update;gsp=/store",
        )
    return url


def parse_spec(value: str) -> EndpointSpec:
    """Parse ``QUERY_URL[;update=URL][;gsp=URL][;union=true|false][;timeout=S]``."""
    head, *options = [part.strip() for part in value.split(";")]
    query = _check_url(head, "query")
    settings: dict[str, str] = {}
    for option in options:
        if not option:
            continue
        key, sep, val = option.partition("=")
        key = key.strip().lower()
        if not sep or key not in ("update", "gsp", "union", "timeout"):
            raise StoreError(
                f"unknown store option {option!r} in {redact(value)!r}",
                hint="Options are ;update=URL, ;gsp=URL, ;union=true|false and ;timeout=SECONDS.",
            )
        settings[key] = val.strip()
    if "update" in settings:
        update = _check_url(urljoin(query, settings["update"]), "update")
    elif urlsplit(query).path.endswith("/query"):
        update = query[: query.rindex("/query")] + "/update"
    else:
        update = query
    gsp = _check_url(urljoin(query, settings["gsp"]), "gsp") if settings.get("gsp") else None
    union: bool | None = None
    if "union" in settings:
        if settings["union"].lower() not in ("true", "false"):
            raise StoreError(f"union={settings['union']!r} must be true or false",
                             hint="Leave it out to let TechKG detect it.")
        union = settings["union"].lower() == "true"
    timeout = 300.0
    if "timeout" in settings:
        try:
            timeout = float(settings["timeout"])
        except ValueError:
            raise StoreError(f"timeout={settings['timeout']!r} is not a number of seconds",
                             hint="Write e.g. ;timeout=120") from None
    return EndpointSpec(query, update, gsp, union, timeout)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and ``location``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))



class ResponseReader(io.RawIOBase):
    """A streamed HTTP response body as a binary file, for pyoxigraph's parsers."""

    def __init__(self, response: httpx.Response) -> None:
        self._chunks = response.iter_bytes()
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


def media_type(response: httpx.Response) -> str:
    return str(response.headers.get("content-type", "")).split(";")[0].strip().lower()


def page_title(body: str) -> str:
    """What an HTML page is about, for a message: its title, else its first words."""
    m = re.search(r"(?is)<title[^>]*>(.*?)</title>", body)
    words = re.sub(r"(?s)<[^>]*>", " ", m.group(1) if m else body)
    return re.sub(r"\s+", " ", words).strip()[:120]
