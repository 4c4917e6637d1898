"""Zotero, read side: pyzotero pointed at ``--api-url``, and Zotero items read as papers.

- :class:`LibrarySpec` names a library (``user:475425`` or ``group:169947``);
  :func:`api_key` finds its key in ``ZOTERO_API_KEY`` or the system keyring and
  registers it as a secret, so that no message, log or graph ever shows it.
- :func:`connect` builds :class:`ZoteroAPI`: pyzotero's client with its ``endpoint``
  set to the API URL, an ``httpx2`` client made with TechKG's HTTP conventions (the
  User-Agent of :mod:`ingest.http`, timeouts, retries of dropped connections and 5xx
  answers, ``Retry-After`` on 429/503, ``Backoff`` on any answer), and the few calls a
  sync needs that pyzotero lacks: multi-object writes whose per-object results are
  returned, with a caller-chosen write token and ``If-Unmodified-Since-Version``.
- :meth:`ZoteroAPI.read_changes` reads what changed since a library version the way
  the sync documentation prescribes: ``format=versions`` with ``since=``, the changed
  objects by key (50 per request), then ``/deleted``; the first read of a library pages
  through everything instead. It restarts when the library moves underneath it.
- :func:`parse_item` turns an item into a :class:`ZoteroItem`: its arXiv id (URL,
  Extra, archive fields, arXiv DOI), DOI, reading status (the zotero-reading-list
  plugin's ``Read_Status:`` lines in Extra, or ``status/...`` tags), tags, collections
  and child notes. :func:`paper_iri_for` maps it to its paper.

``kg ingest zotero`` (:func:`ingest`) reads a library into the graph; it is the
two-way sync of :mod:`ingest.zotero_sync` with the writes to Zotero turned off, so the
two never disagree about what the graph holds.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx2
from pyoxigraph import NamedNode

from ingest.http import Politeness, RetryingTransport, RetryPolicy, SafeRedirects, user_agent
from ingest.secrets import redact, register_secret, safe_url
from ingest.stats import HttpStats
from kg.errors import IngestError, RateLimitError, SyncError
from kg.iris import doi_iri, normalize_doi, paper_iri, parse_arxiv_id
from kg.reading import KNOWN_STATUSES, status_slug

if TYPE_CHECKING:
    pass

__all__ = [
    "DEFAULT_API_URL",
    "PLUGIN_STATUS_NAMES",
    "STATUS_TAG_PREFIX",
    "Changes",
    "LibrarySpec",
    "WriteResult",
    "ZoteroAPI",
    "ZoteroItem",
    "api_key",
    "connect",
    "format_extra",
    "paper_iri_for",
    "parse_extra",
    "parse_item",
    "status_from_zotero",
    "status_to_zotero",
]

DEFAULT_API_URL = "https://api.zotero.org"
KEYRING_SERVICE = "techkg-zotero"
#: Objects per write request and keys per read request (the API's limit).
BATCH = 50
#: The zotero-reading-list plugin's Extra lines.
READ_STATUS = "Read_Status"
READ_STATUS_DATE = "Read_Status_Date"
#: Our line in Extra naming the graph node an item was created from, when no arXiv id
#: or DOI identifies it.
TECHKG_ID = "TechKG-ID"
STATUS_TAG_PREFIX = "status/"

#: The plugin's default status names ↔ TechKG's statuses. Anything else is a custom
#: status, kept verbatim in both directions.
PLUGIN_STATUS_NAMES: dict[str, str] = {
    "to-read": "To Read",
    "reading": "In Progress",
    "read": "Read",
    "skipped": "Not Reading",
}
_FROM_PLUGIN = {name.casefold(): slug for slug, name in PLUGIN_STATUS_NAMES.items()}


# -- libraries and keys ---------------------------------------------------------------


@dataclass(frozen=True)
class LibrarySpec:
    """A Zotero library: ``user:<userID>`` or ``group:<groupID>``."""

    kind: str
    id: int

    @classmethod
    def parse(cls, value: str) -> LibrarySpec:
        m = re.fullmatch(r"\s*(user|group)s?\s*[:/]\s*(\d+)\s*", value or "", re.IGNORECASE)
        if not m:
            raise SyncError(
                f"{value!r} does not name a Zotero library",
                hint="Write --library user:<userID> (the number on zotero.org/settings/keys) or "
                     "--library group:<groupID> (the number in the group's URL).")
        return cls(m.group(1).lower(), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"

    @property
    def slug(self) -> str:
        return f"{self.kind}-{self.id}"

    @property
    def path(self) -> str:
        return f"/{self.kind}s/{self.id}"


def api_key(library: LibrarySpec | None = None, *, environ: Mapping[str, str] | None = None) -> str | None:
    """The Zotero API key: ``ZOTERO_API_KEY``, else the keyring (service
    ``techkg-zotero``, user ``<library>`` or ``default``). Registered as a secret."""
    import os

    env = os.environ if environ is None else environ
    key = (env.get("ZOTERO_API_KEY") or "").strip()
    if not key:
        key = _keyring_key(library)
    if key:
        register_secret(key)
        return key
    return None


def _keyring_key(library: LibrarySpec | None) -> str:
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:  # pragma: no cover - keyring is a dependency
        return ""
    for user in ([str(library)] if library else []) + ["default"]:
        try:
            value = keyring.get_password(KEYRING_SERVICE, user)
        except (KeyringError, RuntimeError):
            return ""
        if value:
            return value.strip()
    return ""


# -- HTTP --------------------------------------------------------------------------------


class ZoteroTransport(RetryingTransport, httpx2.BaseTransport):
    """Retries around pyzotero's transport, the loop of :mod:`ingest.http` on httpx2:
    dropped connections, timeouts and 500, 502 and 504 answers are retried with
    exponential backoff and jitter; 429 and 503 wait for ``Retry-After``; a ``Backoff``
    header on any answer holds this client's next request back. No spacing between
    requests otherwise.

    Writes are retried too: every Zotero write TechKG sends carries a precondition
    (``If-Unmodified-Since-Version``, and a ``Zotero-Write-Token`` on creations), so a
    repeated write is refused with 412 rather than applied twice.
    """

    transport_errors = (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError)
    retry_statuses = frozenset({500, 502, 504})

    def __init__(self, inner: httpx2.BaseTransport, *, retry: RetryPolicy, counters: HttpStats) -> None:
        super().__init__(inner, politeness=Politeness(), retry=retry, stats=counters, own_gate=True)

    @property
    def counters(self) -> HttpStats:
        """What the client did: requests sent (retries included), retries, waits."""
        return self.stats

    def retryable(self, request: Any) -> bool:
        return True


class _Client(SafeRedirects, httpx2.Client):
    """pyzotero's client class, whose redirects never carry the key to another origin."""


def build_client(*, contact: str | None = None, retry: RetryPolicy | None = None, timeout: float = 30.0,
                 counters: HttpStats | None = None) -> httpx2.Client:
    """An httpx2 client for pyzotero with TechKG's conventions (see :class:`ZoteroTransport`)."""
    transport = ZoteroTransport(httpx2.HTTPTransport(retries=0), retry=retry or RetryPolicy(),
                                counters=counters or HttpStats())
    return _Client(
        transport=transport, follow_redirects=True, trust_env=False,
        timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
        headers={"User-Agent": user_agent(contact)})


# -- the API ------------------------------------------------------------------------------


@dataclass
class WriteResult:
    """A multi-object write's answer: index → object for ``successful``, index → key for
    ``unchanged``, index → {key, code, message} for ``failed``; and the library version."""

    successful: dict[int, dict[str, Any]]
    unchanged: dict[int, str]
    failed: dict[int, dict[str, Any]]
    version: int


@dataclass
class Changes:
    """What changed in a library since a version."""

    since: int
    version: int
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    collections: dict[str, dict[str, Any]] = field(default_factory=dict)
    deleted_items: list[str] = field(default_factory=list)
    deleted_collections: list[str] = field(default_factory=list)
    full: bool = False


class PreconditionFailed(SyncError):
    """The library changed since the version a write was based on (412), a write token
    was used already (412), or the API asked for a precondition (428)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message, hint="Another client wrote to the library; the sync re-reads and retries.")
        self.status = status

    @property
    def token_used(self) -> bool:
        return "write token" in self.message.lower()


class TooLarge(SyncError):
    """413: the server takes fewer objects per write than were sent."""


class ZoteroAPI:
    """pyzotero's :class:`~pyzotero.zotero.Zotero`, pointed at ``api_url``, with the
    reads and writes a sync needs and errors turned into :class:`kg.errors.KGError`."""

    def __init__(self, library: LibrarySpec, key: str | None, *, api_url: str = DEFAULT_API_URL,
                 client: httpx2.Client | None = None, contact: str | None = None,
                 retry: RetryPolicy | None = None) -> None:
        from pyzotero import zotero

        self.library = library
        self.api_url = api_url.rstrip("/")
        self.counters = HttpStats()
        if key:
            register_secret(key)
        self._client = client or build_client(contact=contact, retry=retry, counters=self.counters)
        transport = getattr(client, "_transport", None)
        if isinstance(transport, ZoteroTransport):
            self.counters = transport.counters
        self._user_agent = user_agent(contact)
        self.zot = zotero.Zotero(library.id, library.kind, key, client=self._client)
        self.zot.endpoint = self.api_url
        # TechKG names itself (and pyzotero) in every request.
        pyzotero_agent = self.zot.default_headers()["User-Agent"]
        agent = f"{self._user_agent} {pyzotero_agent}"
        original = self.zot.default_headers

        def default_headers() -> dict[str, str]:
            headers = original()
            headers["User-Agent"] = agent
            return headers

        self.zot.default_headers = default_headers  # type: ignore[method-assign]

    @property
    def source_url(self) -> str:
        """The library's URL, for provenance (never with credentials)."""
        return safe_url(f"{self.api_url}{self.library.path}")

    def close(self) -> None:
        self._client.close()

    # -- error handling ------------------------------------------------------------------

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        from pyzotero import errors as ze

        try:
            return fn()
        except ze.PreConditionFailedError as exc:
            raise PreconditionFailed(f"Zotero refused {what}: {_server_message(exc)}", status=412) from None
        except ze.PreConditionRequiredError as exc:
            raise PreconditionFailed(f"Zotero refused {what}: {_server_message(exc)}", status=428) from None
        except ze.RequestEntityTooLargeError as exc:
            raise TooLarge(f"Zotero refused {what} as too large: {_server_message(exc)}") from None
        except ze.TooManyRetriesError:
            raise RateLimitError(
                f"Zotero kept answering 429 (rate limit) to {what}", source="zotero", url=self.source_url,
                status=429, hint="Wait a few minutes and run the command again; nothing was half-written.") from None
        except ze.UserNotAuthorisedError as exc:
            raise IngestError(
                f"Zotero refused access to {self.library} ({what}): {_server_message(exc)}", source="zotero",
                url=self.source_url, status=403,
                hint="Check the API key (ZOTERO_API_KEY or the keyring) and that it may read (and, to sync, "
                     "write) this library; check --library.") from None
        except ze.ResourceNotFoundError as exc:
            raise IngestError(f"Zotero has no {what.split(' ')[-1]} at {self.source_url}: "
                              f"{_server_message(exc)}", source="zotero", url=self.source_url, status=404,
                              hint="Check --library and --api-url.") from None
        except ze.PyZoteroError as exc:
            raise IngestError(f"Zotero answered {what} with an error: {_server_message(exc)}", source="zotero",
                              url=self.source_url,
                              hint="Check --api-url and try again later; nothing was written.") from None
        except httpx2.HTTPError as exc:
            raise IngestError(f"Zotero could not be reached for {what} at {self.source_url}: "
                              f"{redact(str(exc)) or type(exc).__name__}", source="zotero", url=self.source_url,
                              hint="Check the network and --api-url, then run again: the sync resumes "
                                   "where it stopped, without duplicates.") from None
        except (ValueError, KeyError) as exc:
            raise IngestError(f"Zotero's answer to {what} is not the JSON the API gives: {redact(str(exc))}",
                              source="zotero", url=self.source_url,
                              hint="Check that --api-url points at a Zotero API (not a web page).") from None

    def _version(self) -> int:
        request = self.zot.request
        if request is None:
            return 0
        value = request.headers.get("last-modified-version")
        if value is None or not str(value).isdigit():
            raise IngestError("Zotero's answer lacks the Last-Modified-Version header", source="zotero",
                              url=self.source_url, hint="Check that --api-url points at the Zotero Web API v3.")
        return int(value)

    # -- reads ---------------------------------------------------------------------------

    def item_versions(self, since: int) -> tuple[dict[str, int], int]:
        """Keys and versions of regular items and notes changed since ``since`` (trashed
        ones included, attachments left out), and the library version."""
        versions = self._call("the list of changed items", lambda: self.zot.item_versions(
            since=since, includeTrashed=1, itemType="-attachment"))
        return {str(k): int(v) for k, v in dict(versions).items()}, self._version()

    def collection_versions(self, since: int) -> tuple[dict[str, int], int]:
        versions = self._call("the list of changed collections",
                              lambda: self.zot.collection_versions(since=since))
        return {str(k): int(v) for k, v in dict(versions).items()}, self._version()

    def fetch_items(self, keys: list[str]) -> tuple[list[dict[str, Any]], int]:
        """Items by key, at most 50; trashed ones included."""
        assert len(keys) <= BATCH
        found = self._call("items", lambda: self.zot.items(
            itemKey=",".join(keys), includeTrashed=1, limit=BATCH))
        return list(found), self._version()

    def fetch_collections(self, keys: list[str]) -> tuple[list[dict[str, Any]], int]:
        assert len(keys) <= BATCH
        found = self._call("collections", lambda: self.zot.collections(collectionKey=",".join(keys), limit=BATCH))
        return list(found), self._version()

    def deleted(self, since: int) -> tuple[dict[str, list[str]], int]:
        data = self._call("the list of deleted objects", lambda: self.zot.deleted(since=since))
        return {k: list(v) for k, v in dict(data).items()}, self._version()

    def pages(self, what: str) -> Iterator[tuple[list[dict[str, Any]], int, int]]:
        """Every item (``what="items"``, attachments left out, trashed ones included) or
        collection, 100 per request: yields (page, library version, total)."""
        start = 0
        while True:
            query: dict[str, Any] = {"limit": 100, "start": start}
            if what == "items":
                query.update(sort="dateAdded", direction="asc", includeTrashed=1, itemType="-attachment")
            read = self.zot.items if what == "items" else self.zot.collections
            page = self._call(what, lambda read=read, query=query: read(**query))  # type: ignore[misc]
            request = self.zot.request
            total = int(request.headers.get("total-results", len(page))) if request is not None else len(page)
            yield list(page), self._version(), total
            start += len(page)
            if not page or start >= total:
                return

    def read_changes(self, since: int, *, progress: Callable[[str, int, int], None] | None = None,
                     attempts: int = 5) -> Changes:
        """Everything that changed since library version ``since`` (everything when 0).

        Follows the API's sync recipe; when the library version moves between answers
        (another client is writing) the read starts again, up to ``attempts`` times.
        """
        for attempt in range(attempts):
            try:
                return self._read_changes(since, progress)
            except _Moved:
                time.sleep(min(2.0, 0.1 * 2**attempt))
        raise SyncError(f"the Zotero library {self.library} kept changing while it was being read",
                        hint="Another client is writing to it continuously; run the command again later.")

    def _read_changes(self, since: int, progress: Callable[[str, int, int], None] | None) -> Changes:
        if since == 0:
            return self._read_everything(progress)
        versions, version = self.item_versions(since)
        changes = Changes(since=since, version=version)
        if version <= since:
            return changes
        coll_versions, v = self.collection_versions(since)
        _same(version, v)
        for chunk in _chunks(sorted(coll_versions), BATCH):
            found, v = self.fetch_collections(chunk)
            _same(version, v)
            changes.collections.update({c["key"]: c for c in found})
        keys = sorted(versions)
        for done, chunk in enumerate(_chunks(keys, BATCH)):
            found, v = self.fetch_items(chunk)
            _same(version, v)
            changes.items.update({i["key"]: i for i in found})
            if progress:
                progress("items", min(len(keys), (done + 1) * BATCH), len(keys))
        deleted, v = self.deleted(since)
        _same(version, v)
        changes.deleted_items = list(deleted.get("items", []))
        changes.deleted_collections = list(deleted.get("collections", []))
        return changes

    def _read_everything(self, progress: Callable[[str, int, int], None] | None) -> Changes:
        changes: Changes | None = None
        for page, version, _total in self.pages("collections"):
            if changes is None:
                changes = Changes(since=0, version=version, full=True)
            _same(changes.version, version)
            changes.collections.update({c["key"]: c for c in page})
        for page, version, total in self.pages("items"):
            assert changes is not None
            _same(changes.version, version)
            changes.items.update({i["key"]: i for i in page})
            if progress:
                progress("items", len(changes.items), total)
        assert changes is not None
        return changes

    # -- writes --------------------------------------------------------------------------

    def write(self, kind: str, objects: list[dict[str, Any]], *, version: int,
              write_token: str | None = None) -> WriteResult:
        """POST up to 50 objects to ``items`` or ``collections`` with
        ``If-Unmodified-Since-Version: version`` (and the write token, for creations);
        returns the per-object results. 412/428 raise :class:`PreconditionFailed`,
        413 :class:`TooLarge`."""
        from pyzotero._utils import build_url

        headers = {"If-Unmodified-Since-Version": str(version), "Content-Type": "application/json"}
        if write_token:
            headers["Zotero-Write-Token"] = write_token
        url = build_url(self.api_url, f"{self.library.path}/{kind}")

        def send() -> Any:
            for _ in range(3):
                self.zot._check_backoff()
                response = self.zot._write("POST", url=url, content=json.dumps(objects).encode(), headers=headers)
                self.zot.request = response
                self.zot._post_check(response)
                if response.status_code != 429:
                    return response.json()
            raise _rate_limited()

        body = self._call(f"a write of {len(objects)} {kind}", send)
        if not isinstance(body, dict) or not {"successful", "unchanged", "failed"} <= set(body):
            raise IngestError(f"Zotero's answer to a write of {kind} lacks the successful/unchanged/failed keys",
                              source="zotero", url=self.source_url,
                              hint="Check that --api-url points at the Zotero Web API v3.")
        return WriteResult(
            successful={int(i): o for i, o in body["successful"].items()},
            unchanged={int(i): str(k) for i, k in body["unchanged"].items()},
            failed={int(i): dict(f) for i, f in body["failed"].items()},
            version=self._version())


def _rate_limited() -> Exception:
    from pyzotero import errors as ze

    return ze.TooManyRetriesError("still rate-limited")


class _Moved(Exception):
    """The library version changed between two answers of one read."""


def _same(expected: int, got: int) -> None:
    if got != expected:
        raise _Moved()


def _chunks(values: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(values), size):
        yield values[i: i + size]


def _server_message(exc: Exception) -> str:
    text = str(exc)
    m = re.search(r"Response:\s*(.*)", text, re.DOTALL)
    message = (m.group(1) if m else text).strip().splitlines()[0] if text.strip() else type(exc).__name__
    return redact(message[:300])


def connect(library: LibrarySpec, *, key: str | None = None, api_url: str | None = None,
            client: httpx2.Client | None = None, contact: str | None = None,
            retry: RetryPolicy | None = None) -> ZoteroAPI:
    """A :class:`ZoteroAPI` for ``library``; the key defaults to :func:`api_key`."""
    return ZoteroAPI(library, key if key is not None else api_key(library), api_url=api_url or DEFAULT_API_URL,
                     client=client, contact=contact, retry=retry)


# -- items ------------------------------------------------------------------------------


_EXTRA_LINE = re.compile(r"^\s*([^:\n]{1,60}?)\s*:\s*(.*?)\s*$")


def parse_extra(extra: str) -> tuple[dict[str, list[str]], list[str]]:
    """``Key: value`` lines of Extra (keys case-folded) and the lines that are not the
    reading-list plugin's (every line except ``Read_Status``/``Read_Status_Date``)."""
    fields: dict[str, list[str]] = {}
    rest: list[str] = []
    for line in (extra or "").splitlines():
        m = _EXTRA_LINE.match(line)
        if m:
            name = m.group(1).casefold()
            fields.setdefault(name, []).append(m.group(2))
            if name in (READ_STATUS.casefold(), READ_STATUS_DATE.casefold()):
                continue
        rest.append(line)
    while rest and not rest[-1].strip():
        rest.pop()
    return fields, rest


def format_extra(rest: Iterable[str], status: str | None, status_at: dt.datetime | None) -> str:
    """Extra with the plugin's lines for ``status`` appended, as the plugin writes them."""
    lines = list(rest)
    if status is not None:
        lines.append(f"{READ_STATUS}: {status_to_zotero(status)}")
        if status_at is not None:
            lines.append(f"{READ_STATUS_DATE}: {_iso_ms(status_at)}")
    return "\n".join(lines)


def _iso_ms(moment: dt.datetime) -> str:
    moment = moment.astimezone(dt.UTC) if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def status_from_zotero(value: str) -> str | None:
    """A status as Zotero shows it → TechKG's: the plugin's names and TechKG's own slugs
    map to the known statuses; anything else is a custom status, kept verbatim."""
    text = " ".join((value or "").split())
    if not text:
        return None
    if text.casefold() in _FROM_PLUGIN:
        return _FROM_PLUGIN[text.casefold()]
    slug = status_slug(text)
    return slug if slug in KNOWN_STATUSES else text


def status_to_zotero(status: str) -> str:
    """TechKG's status → the text Zotero shows (the plugin's names for known ones)."""
    return PLUGIN_STATUS_NAMES.get(status, status)


def status_tag(status: str) -> str:
    return STATUS_TAG_PREFIX + (status if status in KNOWN_STATUSES else status)


def parse_time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


@dataclass
class ZoteroItem:
    """A Zotero item (or child note) as the sync reads it."""

    key: str
    version: int
    item_type: str
    data: dict[str, Any]
    title: str = ""
    trashed: bool = False
    parent: str | None = None
    note: str = ""
    arxiv: str | None = None
    doi: str | None = None
    techkg_id: str | None = None
    url: str = ""
    date: str = ""
    creators: list[dict[str, str]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    status_tags: list[str] = field(default_factory=list)
    collections: list[str] = field(default_factory=list)
    extra_rest: list[str] = field(default_factory=list)
    extra_status: str | None = None
    extra_status_at: dt.datetime | None = None
    tag_status: str | None = None
    modified: dt.datetime | None = None

    @property
    def is_note(self) -> bool:
        return self.item_type == "note"

    @property
    def is_regular(self) -> bool:
        return self.item_type not in ("note", "attachment", "annotation")


_ARXIV_IN_TEXT = re.compile(r"arxiv[:\s./]*(?:abs/|pdf/)?(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})",
                            re.IGNORECASE)


def _arxiv_candidates(data: Mapping[str, Any], extra: Mapping[str, list[str]]) -> Iterator[str]:
    url = str(data.get("url") or "")
    if "arxiv.org/" in url.lower():
        yield url
    for name in ("arxiv", "arxiv id", "arxiv_id", "eprint"):
        yield from extra.get(name, [])
    archive_id = str(data.get("archiveID") or "")
    if archive_id:
        yield archive_id
    if str(data.get("archive") or "").strip().lower() == "arxiv" and data.get("archiveLocation"):
        yield str(data["archiveLocation"])
    if str(data.get("repository") or "").strip().lower() == "arxiv" and data.get("number"):
        yield str(data["number"])
    doi = str(data.get("DOI") or "")
    m = re.match(r"(?i)^(?:https?://(?:dx\.)?doi\.org/)?10\.48550/arxiv\.(.+)$", doi.strip())
    if m:
        yield m.group(1)
    for text in (str(data.get("publicationTitle") or ""), str(data.get("extra") or "")):
        for hit in _ARXIV_IN_TEXT.finditer(text):
            yield hit.group(1)


def _first_arxiv(data: Mapping[str, Any], extra: Mapping[str, list[str]]) -> str | None:
    for candidate in _arxiv_candidates(data, extra):
        raw = candidate.strip()
        if raw.lower().startswith("arxiv:"):
            raw = raw[6:].strip()
        try:
            return parse_arxiv_id(raw).id
        except ValueError:
            continue
    return None


def parse_item(obj: Mapping[str, Any]) -> ZoteroItem:
    """An item as the API returns it (with ``data``), or its ``data`` alone."""
    data = dict(obj.get("data", obj))
    extra_fields, rest = parse_extra(str(data.get("extra") or ""))
    item = ZoteroItem(
        key=str(data["key"]), version=int(data.get("version", obj.get("version", 0)) or 0),
        item_type=str(data.get("itemType", "")), data=data, title=str(data.get("title") or ""),
        trashed=bool(data.get("deleted")), parent=data.get("parentItem") or None,
        note=str(data.get("note") or ""), url=str(data.get("url") or ""), date=str(data.get("date") or ""),
        creators=[dict(c) for c in data.get("creators") or [] if isinstance(c, dict)],
        collections=[str(c) for c in data.get("collections") or []], extra_rest=rest,
        modified=parse_time(data.get("dateModified")),
    )
    for tag in data.get("tags") or []:
        name = str(tag.get("tag", "")) if isinstance(tag, dict) else str(tag)
        if name.startswith(STATUS_TAG_PREFIX) and len(name) > len(STATUS_TAG_PREFIX):
            item.status_tags.append(name)
        elif name:
            item.tags.append(name)
    statuses = extra_fields.get(READ_STATUS.casefold(), [])
    if statuses:
        item.extra_status = status_from_zotero(statuses[-1])
        dates = extra_fields.get(READ_STATUS_DATE.casefold(), [])
        item.extra_status_at = parse_time(dates[-1]) if dates else None
    if item.status_tags:
        item.tag_status = status_from_zotero(item.status_tags[-1][len(STATUS_TAG_PREFIX):])
    if item.is_regular:
        item.arxiv = _first_arxiv(data, extra_fields)
        doi = str(data.get("DOI") or "").strip() or next(iter(extra_fields.get("doi", [])), "")
        try:
            item.doi = normalize_doi(doi) if doi else None
        except ValueError:
            item.doi = None
        ids = extra_fields.get(TECHKG_ID.casefold(), [])
        item.techkg_id = ids[-1] if ids and ids[-1].startswith(("http://", "https://")) else None
    return item


def paper_iri_for(item: ZoteroItem, library: LibrarySpec,
                  existing: Callable[[str | None, str | None], NamedNode | None] | None = None) -> NamedNode:
    """The paper an item is about: the node it was created from (its ``TechKG-ID``
    line), the graph's paper with its arXiv id or DOI, the IRI that id gives, or else
    a new paper named after the library and the item key."""
    if item.techkg_id:
        return NamedNode(item.techkg_id)
    if existing is not None and (item.arxiv or item.doi):
        found = existing(item.arxiv, item.doi)
        if found is not None:
            return found
    if item.arxiv:
        return parse_arxiv_id(item.arxiv).iri
    if item.doi:
        return doi_iri(item.doi)
    return paper_iri(key=f"zotero-{library.slug}-{item.key.lower()}")
