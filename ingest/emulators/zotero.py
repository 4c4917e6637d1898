"""A faithful Zotero Web API v3 emulator, served as a real HTTP server on loopback.

It keeps what a syncing client depends on, as the API documents it and the
dataserver implements it (see ``../shared/reference/api-notes.md``):

- user and group libraries, each with its own version; every write bumps the library
  version once and stamps the objects it changed with it;
- ``Last-Modified-Version`` on successful answers (the library version on
  multi-object requests, the object's version on single-object ones), never on errors;
- ``since=``, ``format=json|versions|keys``, ``itemKey``/``collectionKey`` (at most
  50), ``includeTrashed``, ``limit`` (1-100, default 25), ``start``, ``sort``,
  ``Total-Results`` and ``Link`` pagination headers; ``If-Modified-Since-Version``
  answered with 304 on multi-object reads;
- ``/deleted?since=`` (400 without ``since``), trash semantics (``deleted: 1``);
- writes: multi-object ``POST`` with the ``successful``/``success``/``unchanged``/
  ``failed`` result keyed by index, PATCH semantics for existing objects, single-object
  ``PUT``/``PATCH``/``DELETE`` answering 204; ``If-Unmodified-Since-Version`` (412 with
  the dataserver's wording, 428 when a keyed write or a DELETE lacks any precondition,
  400 when the header and the JSON version disagree, version 0 meaning "must not
  exist"); ``Zotero-Write-Token`` (5-32 characters, 412 when reused); at most 50
  objects per write (413);
- API keys (``Authorization: Bearer``, ``Zotero-API-Key`` or ``?key=``) with read and
  write access per library; the item-type schema (``/itemTypes``, ``/itemFields``,
  ``/items/new`` ...), enforced on writes.

Faults are injected on demand through :attr:`ZoteroEmulator.faults`: 429 storms with
``Retry-After``, ``Backoff`` headers, any status, a racing writer that changes the
library just before a request (so its precondition fails with 412), and connections
dropped before or after a write is applied. :attr:`ZoteroEmulator.requests` records
every request (never the API key).

Libraries can also be changed directly, as another Zotero client would
(:meth:`Library.create_items`, :meth:`Library.update_item`, :meth:`Library.trash` ...),
through the same code path as HTTP writes.

>>> with ZoteroEmulator() as emu:                                      # doctest: +SKIP
...     lib = emu.add_library("user", 475425, name="reader")
...     emu.add_key("SECRETKEY", user_id=475425)
...     zot = pyzotero.zotero.Zotero(475425, "user", "SECRETKEY")
...     zot.endpoint = emu.url
"""

from __future__ import annotations

import bisect
import copy
import datetime as dt
import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from ingest.emulators.loopback import LoopbackServer
from ingest.emulators.zotero_schema import (
    COMMON_KEYS,
    CREATOR_TYPES,
    FIELD_LABELS,
    ITEM_FIELDS,
    ITEM_TYPE_LABELS,
    SCHEMA_VERSION,
)

__all__ = ["Faults", "Library", "RequestRecord", "ZoteroEmulator", "ZoteroError"]

KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
_KEY = re.compile(rf"^[{KEY_ALPHABET}]{{8}}$")
MAX_KEYS_PER_REQUEST = 50
WEB = "https://www.zotero.org"


class ZoteroError(Exception):
    """An error answer: status and text/plain message, as the API gives them."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False


@dataclass(frozen=True)
class RequestRecord:
    """One request as the emulator saw it (the API key is never recorded)."""

    method: str
    path: str
    params: dict[str, str]
    status: int
    at: float
    authorized: bool
    write_token: str | None = None
    if_unmodified: str | None = None
    if_modified: str | None = None
    dropped: bool = False
    objects: int = 0


def _now_stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_MONTHS = {name: i for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}


def _parsed_date(value: str) -> str | None:
    """``meta.parsedDate``: the date as YYYY, YYYY-MM or YYYY-MM-DD, read from the forms
    people type (2008-12-14, May 01, 1980, 08/1993, 14 December 2008, 1992)."""
    raw = " ".join((value or "").replace(",", " ").split())
    m = re.match(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?\b", raw)
    if m:
        year, month, day = m.groups()
        return "-".join([year] + [f"{int(p):02d}" for p in (month, day) if p])
    m = re.match(r"^(\d{1,2})/(?:(\d{1,2})/)?(\d{4})$", raw)
    if m:
        first, second, year = m.groups()
        return f"{year}-{int(first):02d}" + (f"-{int(second):02d}" if second else "")
    words = raw.split(" ")
    month = next((_MONTHS[w[:3].lower()] for w in words if w[:3].lower() in _MONTHS and w.isalpha()), None)
    year = next((w for w in words if re.fullmatch(r"\d{4}", w)), None)
    day = next((w for w in words if re.fullmatch(r"\d{1,2}", w)), None)
    if year and month:
        return f"{year}-{month:02d}" + (f"-{int(day):02d}" if day else "")
    return year


def _creator_summary(item_type: str, creators: list[dict[str, Any]]) -> str | None:
    """``meta.creatorSummary``: the primary creators' last names (all creators when the
    type's primary role is absent): "A", "A and B" or "A et al."."""
    valid = [c for c in creators if isinstance(c, dict)]
    primary = CREATOR_TYPES.get(item_type, ("author",))[0]
    chosen = [c for c in valid if c.get("creatorType") == primary] or valid
    names = [n for n in (c.get("lastName") or c.get("name") or "" for c in chosen) if n]
    if not names:
        return None
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


# -- libraries ---------------------------------------------------------------------------


class Library:
    """One user or group library: objects, versions, deletions and used write tokens."""

    def __init__(self, emulator: ZoteroEmulator, kind: str, id: int, name: str, public: bool) -> None:
        self.emulator = emulator
        self.kind = kind
        self.id = id
        self.name = name
        self.public = public
        self.version = 0
        self.items: dict[str, dict[str, Any]] = {}
        self.collections: dict[str, dict[str, Any]] = {}
        self.searches: dict[str, dict[str, Any]] = {}
        self.deleted: dict[str, dict[str, int]] = {
            "collections": {}, "items": {}, "searches": {}, "tags": {}, "settings": {}}
        self.tokens: set[str] = set()
        #: (version, key) of every item change, in version order: what ``since=`` reads,
        #: the way the dataserver reads an index rather than scanning the library.
        self.item_log: list[tuple[int, str]] = []
        #: Answers derived from the whole library (sorted listings, child counts), kept
        #: while the library version stays the same: paging through it costs one sort.
        self._cache: dict[Any, tuple[int, Any]] = {}

    def _stamped(self, data: dict[str, Any], version: int) -> None:
        data["version"] = version
        self.item_log.append((version, data["key"]))

    def items_since(self, since: int) -> list[dict[str, Any]]:
        start = bisect.bisect_right(self.item_log, (since, "\uffff"))
        seen: dict[str, dict[str, Any]] = {}
        for version, key in self.item_log[start:]:
            data = self.items.get(key)
            if data is not None and data["version"] == version:
                seen[key] = data
        return list(seen.values())

    def child_counts(self) -> dict[str, int]:
        cached = self._cache.get("children")
        if cached is not None and cached[0] == self.version:
            return cached[1]  # type: ignore[no-any-return]
        counts: dict[str, int] = {}
        for data in self.items.values():
            parent = data.get("parentItem")
            if parent:
                counts[parent] = counts.get(parent, 0) + 1
        self._cache["children"] = (self.version, counts)
        return counts

    @property
    def prefix(self) -> str:
        return f"/{self.kind}s/{self.id}"

    # -- direct changes, as another Zotero client would make them --------------------

    def create_items(self, items: Iterable[Mapping[str, Any]]) -> list[str]:
        """Create items (or child notes, with ``parentItem``); returns their keys."""
        with self.emulator.lock:
            result = self.emulator._write_objects(self, "items", [dict(i) for i in items], None, None)
        if result["failed"]:
            raise ValueError(f"could not create: {result['failed']}")
        return [result["success"][str(i)] for i in range(len(result["success"]))]

    def create_collection(self, name: str, parent: str | None = None, *, key: str | None = None) -> str:
        obj: dict[str, Any] = {"name": name, "parentCollection": parent or False}
        if key:
            obj["key"] = key
        with self.emulator.lock:
            result = self.emulator._write_objects(self, "collections", [obj], None, None)
        if result["failed"]:
            raise ValueError(f"could not create the collection: {result['failed']}")
        return str(result["success"]["0"])

    def update_item(self, key: str, **changes: Any) -> int:
        """Change fields of an item (PATCH semantics); returns the new library version."""
        with self.emulator.lock:
            result = self.emulator._write_objects(self, "items", [{"key": key, **changes}], self.version, None)
        if result["failed"]:
            raise ValueError(f"could not update {key}: {result['failed']}")
        return self.version

    def update_collection(self, key: str, **changes: Any) -> int:
        with self.emulator.lock:
            result = self.emulator._write_objects(self, "collections", [{"key": key, **changes}],
                                                  self.version, None)
        if result["failed"]:
            raise ValueError(f"could not update collection {key}: {result['failed']}")
        return self.version

    def trash(self, key: str) -> int:
        """Move an item to the trash (``deleted: 1``)."""
        return self.update_item(key, deleted=1)

    def restore(self, key: str) -> int:
        return self.update_item(key, deleted=0)

    def delete_items(self, keys: Iterable[str]) -> int:
        """Delete items for good (they then appear in ``/deleted``)."""
        with self.emulator.lock:
            self.emulator._delete_objects(self, "items", list(keys))
        return self.version

    def delete_collections(self, keys: Iterable[str]) -> int:
        with self.emulator.lock:
            self.emulator._delete_objects(self, "collections", list(keys))
        return self.version

    def item(self, key: str) -> dict[str, Any]:
        with self.emulator.lock:
            return copy.deepcopy(self.items[key])

    def top_items(self, *, include_trashed: bool = False) -> list[dict[str, Any]]:
        with self.emulator.lock:
            return [copy.deepcopy(d) for d in self.items.values()
                    if "parentItem" not in d and (include_trashed or not d.get("deleted"))]

    def children(self, key: str) -> list[dict[str, Any]]:
        with self.emulator.lock:
            return [copy.deepcopy(d) for d in self.items.values() if d.get("parentItem") == key]


# -- faults -----------------------------------------------------------------------------


@dataclass
class _Fault:
    kind: str
    matches: Callable[[str, str], bool]
    times: int
    skip: int = 0
    status: int = 0
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    after_apply: bool = True
    action: Callable[[ZoteroEmulator], None] | None = None
    seconds: float = 0.0


def _matcher(on: str, path: str | None) -> Callable[[str, str], bool]:
    pattern = re.compile(path) if path else None

    def matches(method: str, request_path: str) -> bool:
        if on == "read" and method != "GET":
            return False
        if on == "write" and method not in ("POST", "PUT", "PATCH", "DELETE"):
            return False
        return pattern is None or bool(pattern.search(request_path))

    return matches


class Faults:
    """Faults to inject into the next matching requests.

    ``on`` is ``"any"``, ``"read"`` (GET) or ``"write"`` (POST, PUT, PATCH, DELETE);
    ``path`` is a regular expression the request path must contain; ``skip`` lets that
    many matching requests through first.
    """

    def __init__(self) -> None:
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()

    def rate_limit(self, times: int = 3, *, retry_after: float = 1, on: str = "any", path: str | None = None,
                   skip: int = 0, message: str = "Rate limit exceeded") -> None:
        """A 429 storm: the next ``times`` matching requests get 429 with ``Retry-After``."""
        self._add(_Fault("status", _matcher(on, path), times, skip, 429, message,
                         {"Retry-After": _seconds(retry_after)}))

    def backoff(self, seconds: float, *, times: int = 1, on: str = "any", path: str | None = None,
                skip: int = 0) -> None:
        """Add ``Backoff: seconds`` to the next ``times`` matching answers."""
        self._add(_Fault("backoff", _matcher(on, path), times, skip, seconds=seconds))

    def answer(self, status: int, body: str = "", *, times: int = 1, on: str = "any", path: str | None = None,
               skip: int = 0, headers: Mapping[str, str] | None = None) -> None:
        """Answer the next ``times`` matching requests with ``status`` and a text body."""
        self._add(_Fault("status", _matcher(on, path), times, skip, status, body, dict(headers or {})))

    def drop(self, *, after_apply: bool = True, times: int = 1, on: str = "write", path: str | None = None,
             skip: int = 0) -> None:
        """Close the connection without an answer: after applying the request (the write
        happened but the client never hears of it) or before."""
        self._add(_Fault("drop", _matcher(on, path), times, skip, after_apply=after_apply))

    def race(self, action: Callable[[ZoteroEmulator], None], *, times: int = 1, on: str = "write",
             path: str | None = None, skip: int = 0) -> None:
        """Run ``action`` (another client's change) just before the next matching request."""
        self._add(_Fault("race", _matcher(on, path), times, skip, action=action))

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return sum(f.times for f in self._faults)

    def _add(self, fault: _Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def take(self, method: str, path: str) -> list[_Fault]:
        """The faults that apply to this request (each consumes one of its ``times``)."""
        out = []
        with self._lock:
            for fault in self._faults:
                if fault.times <= 0 or not fault.matches(method, path):
                    continue
                if fault.skip > 0:
                    fault.skip -= 1
                    continue
                fault.times -= 1
                out.append(fault)
            self._faults = [f for f in self._faults if f.times > 0]
        return out


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# -- the emulator ----------------------------------------------------------------------


@dataclass
class _Key:
    user_id: int
    write: bool
    libraries: frozenset[str] | None  # None: every library


class ZoteroEmulator(LoopbackServer):
    """The Zotero Web API v3 on ``http://127.0.0.1:<port>``; use as a context manager.

    ``max_write_objects`` is the per-request object limit (50 on zotero.org);
    ``clock`` gives the time stamped on ``dateAdded``/``dateModified``; ``seed`` makes
    generated keys reproducible.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, max_write_objects: int = 50,
                 clock: Callable[[], dt.datetime] | None = None, seed: int | None = None) -> None:
        super().__init__(host=host, port=port)
        self.max_write_objects = max_write_objects
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self.lock = threading.RLock()
        self.libraries: dict[str, Library] = {}
        self.keys: dict[str, _Key] = {}
        self.faults = Faults()
        self.requests: list[RequestRecord] = []
        self._rng = random.Random(seed)

    thread_name = "zotero-emulator"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_class(self)

    # -- set-up -----------------------------------------------------------------------

    def add_library(self, kind: str, id: int, *, name: str | None = None, public: bool = False) -> Library:
        if kind not in ("user", "group"):
            raise ValueError("a library is a 'user' or a 'group' library")
        library = Library(self, kind, int(id), name or f"{kind}{id}", public)
        with self.lock:
            self.libraries[library.prefix] = library
        return library

    def library(self, kind: str, id: int) -> Library:
        return self.libraries[f"/{kind}s/{id}"]

    def add_key(self, key: str, *, user_id: int, write: bool = True,
                libraries: Iterable[str] | None = None) -> None:
        """An API key of user ``user_id``; ``libraries`` ("user:1", "group:2") limits its
        access (default: every library)."""
        allowed = None if libraries is None else frozenset(
            f"/{spec.split(':')[0]}s/{spec.split(':')[1]}" for spec in libraries)
        self.keys[key] = _Key(int(user_id), write, allowed)

    def request_count(self, method: str | None = None) -> int:
        return sum(1 for r in self.requests if method is None or r.method == method)

    # -- helpers --------------------------------------------------------------------

    def new_key(self, *taken: Mapping[str, object]) -> str:
        while True:
            key = "".join(self._rng.choice(KEY_ALPHABET) for _ in range(8))
            if not any(key in t for t in taken):
                return key

    def _stamp(self) -> str:
        return _now_stamp(self.clock())

    def _library_json(self, lib: Library) -> dict[str, Any]:
        alternate = f"{WEB}/{lib.name}" if lib.kind == "user" else f"{WEB}/groups/{lib.id}"
        return {"type": lib.kind, "id": lib.id, "name": lib.name,
                "links": {"alternate": {"href": alternate, "type": "text/html"}}}

    def _alternate(self, lib: Library, what: str, key: str) -> str:
        base = f"{WEB}/{lib.name}" if lib.kind == "user" else f"{WEB}/groups/{lib.id}"
        return f"{base}/{what}/{key}"

    def item_json(self, lib: Library, data: Mapping[str, Any],
                  children: Mapping[str, int] | None = None) -> dict[str, Any]:
        key = data["key"]
        links: dict[str, Any] = {
            "self": {"href": f"{self.url}{lib.prefix}/items/{key}", "type": "application/json"},
            "alternate": {"href": self._alternate(lib, "items", key), "type": "text/html"},
        }
        meta: dict[str, Any] = {}
        if data.get("parentItem"):
            links["up"] = {"href": f"{self.url}{lib.prefix}/items/{data['parentItem']}",
                           "type": "application/json"}
        elif data.get("itemType") not in ("note", "attachment"):
            summary = _creator_summary(str(data.get("itemType", "")), data.get("creators") or [])
            if summary:
                meta["creatorSummary"] = summary
            parsed = _parsed_date(str(data.get("date") or ""))
            if parsed:
                meta["parsedDate"] = parsed
            meta["numChildren"] = (children if children is not None else lib.child_counts()).get(key, 0)
        return {"key": key, "version": data["version"], "library": self._library_json(lib), "links": links,
                "meta": meta, "data": copy.deepcopy(dict(data))}

    def collection_json(self, lib: Library, data: Mapping[str, Any]) -> dict[str, Any]:
        key = data["key"]
        links: dict[str, Any] = {
            "self": {"href": f"{self.url}{lib.prefix}/collections/{key}", "type": "application/json"},
            "alternate": {"href": self._alternate(lib, "collections", key), "type": "text/html"},
        }
        if data.get("parentCollection"):
            links["up"] = {"href": f"{self.url}{lib.prefix}/collections/{data['parentCollection']}",
                           "type": "application/atom+xml"}
        meta = {
            "numCollections": sum(1 for c in lib.collections.values() if c.get("parentCollection") == key),
            "numItems": sum(1 for d in lib.items.values() if key in (d.get("collections") or [])
                            and not d.get("deleted")),
        }
        return {"key": key, "version": data["version"], "library": self._library_json(lib), "links": links,
                "meta": meta, "data": copy.deepcopy(dict(data))}

    # -- writes (shared by HTTP and direct changes) ---------------------------------------

    def _check_item(self, lib: Library, obj: Mapping[str, Any], existing: Mapping[str, Any] | None) -> None:
        item_type = obj.get("itemType", existing.get("itemType") if existing else None)
        if not item_type:
            raise ZoteroError(400, "'itemType' property not provided")
        if item_type not in ITEM_FIELDS:
            raise ZoteroError(400, f"'{item_type}' is not a valid itemType")
        allowed = set(ITEM_FIELDS[item_type]) | COMMON_KEYS
        for name in obj:
            if name not in allowed:
                raise ZoteroError(400, f"'{name}' is not a valid field for type '{item_type}'")
        for name in ITEM_FIELDS[item_type]:
            if name in obj and not isinstance(obj[name], str):
                raise ZoteroError(400, f"'{name}' must be a string")
        creators = obj.get("creators", [])
        if not isinstance(creators, list):
            raise ZoteroError(400, "'creators' property must be an array")
        for creator in creators:
            if not isinstance(creator, dict) or "creatorType" not in creator:
                raise ZoteroError(400, "Creator object must contain 'creatorType'")
            if creator["creatorType"] not in CREATOR_TYPES.get(item_type, ("author",)):
                raise ZoteroError(400, f"'{creator['creatorType']}' is not a valid creator type for "
                                       f"item type '{item_type}'")
            if not (creator.get("name") or creator.get("lastName") or creator.get("firstName")):
                raise ZoteroError(400, "Creator must have a name, or a first or last name")
        tags = obj.get("tags", [])
        if not isinstance(tags, list) or any(
                not isinstance(t, dict) or not isinstance(t.get("tag"), str) or not t["tag"].strip()
                or t.get("type", 0) not in (0, 1) for t in tags):
            raise ZoteroError(400, "'tags' must be an array of objects with a non-empty 'tag' "
                                   "(and 'type' 0 or 1)")
        parent = obj.get("parentItem", existing.get("parentItem") if existing else None)
        if parent:
            if item_type not in ("note", "attachment"):
                raise ZoteroError(400, "Only notes and attachments can be child items")
            target = lib.items.get(parent)
            if target is None:
                raise ZoteroError(409, f"Parent item {parent} doesn't exist")
            if target.get("parentItem"):
                raise ZoteroError(400, "Parent item cannot be a child item")
        collections = obj.get("collections", [])
        if not isinstance(collections, list):
            raise ZoteroError(400, "'collections' must be an array")
        if collections and parent:
            raise ZoteroError(400, "Child items cannot be assigned to collections")
        for key in collections:
            if key not in lib.collections:
                raise ZoteroError(409, f"Collection {key} doesn't exist")
        relations = obj.get("relations", {})
        if not isinstance(relations, dict):
            raise ZoteroError(400, "'relations' property must be an object")

    def _check_collection(self, lib: Library, obj: Mapping[str, Any], existing: Mapping[str, Any] | None) -> None:
        for name in obj:
            if name not in ("key", "version", "name", "parentCollection", "relations", "deleted"):
                raise ZoteroError(400, f"Invalid property '{name}'")
        name = obj.get("name", existing.get("name") if existing else None)
        if not isinstance(name, str) or not name.strip():
            raise ZoteroError(400, "Collection name cannot be empty")
        parent = obj.get("parentCollection", False)
        if parent and parent not in lib.collections:
            raise ZoteroError(409, f"Parent collection {parent} doesn't exist")
        if parent and existing is not None and parent == existing["key"]:
            raise ZoteroError(400, "Collection cannot be its own parent")

    def _write_objects(self, lib: Library, kind: str, objects: list[Any], header_version: int | None,
                       write_token: str | None) -> dict[str, Any]:
        """Apply a multi-object write; raise ZoteroError for request-level failures.
        Must be called with the lock held."""
        store = lib.items if kind == "items" else lib.collections
        if len(objects) > self.max_write_objects:
            raise ZoteroError(413, f"Cannot add more than {self.max_write_objects} {kind} at a time")
        if write_token is not None:
            if not 5 <= len(write_token) <= 32:
                raise ZoteroError(400, "Write token must be 5-32 characters")
            if write_token in lib.tokens:
                raise ZoteroError(412, "Write token already used")
        if header_version is not None and lib.version > header_version:
            raise ZoteroError(412, f"Library has been modified since specified version "
                                   f"(expected {header_version}, found {lib.version})")
        new_version = lib.version + 1
        stamp = self._stamp()
        successful: dict[str, Any] = {}
        success: dict[str, str] = {}
        unchanged: dict[str, str] = {}
        failed: dict[str, Any] = {}
        pending: dict[str, dict[str, Any]] = {}
        for index, obj in enumerate(objects):
            slot = str(index)
            key = obj.get("key") if isinstance(obj, dict) else None
            try:
                if not isinstance(obj, dict):
                    raise ZoteroError(400, "Invalid value for index " + slot + " in uploaded data; "
                                           "expected JSON object")
                if key is not None and not (isinstance(key, str) and _KEY.match(key)):
                    raise ZoteroError(400, f"'key' must be an 8-character string ('{key}' given)")
                existing = pending.get(key) or store.get(key) if key else None
                version = obj.get("version")
                if existing is None:
                    if key and version not in (None, 0):
                        raise ZoteroError(404, f"{kind[:-1].capitalize()} doesn't exist")
                    (self._check_item if kind == "items" else self._check_collection)(lib, obj, None)
                    key = key or self.new_key(store, pending)
                    data = self._new_object(kind, key, obj, stamp)
                    pending[key] = data
                    successful[slot] = data
                    success[slot] = key
                    continue
                if version is not None:
                    if version == 0:
                        raise ZoteroError(412, f"{kind[:-1].capitalize()} {key} already exists")
                    if existing["version"] > version:
                        raise ZoteroError(412, f"{kind[:-1].capitalize()} has been modified since specified "
                                               f"version (expected {version}, found {existing['version']})")
                elif header_version is None:
                    raise ZoteroError(428, "If-Unmodified-Since-Version not provided")
                changes = {k: v for k, v in obj.items() if k not in ("key", "version", "dateAdded",
                                                                       "dateModified")}
                (self._check_item if kind == "items" else self._check_collection)(lib, changes, existing)
                updated = self._patched(existing, changes)
                assert isinstance(key, str)
                if updated == existing:
                    unchanged[slot] = key
                    continue
                if kind == "items":
                    updated["dateModified"] = stamp
                pending[key] = updated
                successful[slot] = updated
                success[slot] = key
            except ZoteroError as error:
                failed[slot] = {"key": key or "", "code": error.status, "message": error.message}
        if pending:
            lib.version = new_version
            for key, data in pending.items():
                if kind == "items":
                    lib._stamped(data, new_version)
                else:
                    data["version"] = new_version
                store[key] = data
        if write_token is not None:
            lib.tokens.add(write_token)
        if kind == "items":
            children = lib.child_counts() if successful else {}
            rendered = {slot: self.item_json(lib, store[d["key"]], children) for slot, d in successful.items()}
        else:
            rendered = {slot: self.collection_json(lib, store[d["key"]]) for slot, d in successful.items()}
        return {"successful": rendered,
                "success": success, "unchanged": unchanged, "failed": failed}

    def _new_object(self, kind: str, key: str, obj: Mapping[str, Any], stamp: str) -> dict[str, Any]:
        if kind == "collections":
            return {"key": key, "version": 0, "name": obj["name"],
                    "parentCollection": obj.get("parentCollection") or False,
                    "relations": copy.deepcopy(obj.get("relations", {}))}
        item_type = obj["itemType"]
        data: dict[str, Any] = {"key": key, "version": 0}
        if obj.get("parentItem"):
            data["parentItem"] = obj["parentItem"]
        data["itemType"] = item_type
        for name in ITEM_FIELDS[item_type]:
            data[name] = obj.get(name, "")
        if item_type not in ("note", "attachment"):
            data["creators"] = copy.deepcopy(obj.get("creators", []))
        data["tags"] = [_tag(t) for t in obj.get("tags", [])]
        if not obj.get("parentItem"):
            data["collections"] = list(obj.get("collections", []))
        data["relations"] = copy.deepcopy(obj.get("relations", {}))
        if obj.get("deleted"):
            data["deleted"] = 1
        data["dateAdded"] = stamp
        data["dateModified"] = stamp
        return data

    @staticmethod
    def _patched(existing: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
        updated = copy.deepcopy(dict(existing))
        for name, value in changes.items():
            if name == "deleted":
                if value in (1, True, "1", "true"):
                    updated["deleted"] = 1
                else:
                    updated.pop("deleted", None)
            elif name == "tags":
                updated["tags"] = [_tag(t) for t in value]
            elif name == "parentCollection":
                updated[name] = value or False
            else:
                updated[name] = copy.deepcopy(value)
        return updated

    def _delete_objects(self, lib: Library, kind: str, keys: list[str]) -> None:
        if len(keys) > MAX_KEYS_PER_REQUEST:
            raise ZoteroError(413, f"Cannot delete more than {MAX_KEYS_PER_REQUEST} {kind} at a time")
        store = lib.items if kind == "items" else lib.collections
        doomed = {k for k in keys if k in store}
        if kind == "items":
            doomed |= {k for k, d in store.items() if d.get("parentItem") in doomed}
        else:
            frontier = set(doomed)
            while frontier:
                frontier = {k for k, c in store.items() if c.get("parentCollection") in frontier} - doomed
                doomed |= frontier
        if not doomed:
            return
        lib.version += 1
        for key in doomed:
            del store[key]
            lib.deleted[kind][key] = lib.version
        if kind == "collections":
            stamp = self._stamp()
            for data in lib.items.values():
                if set(data.get("collections") or []) & doomed:
                    data["collections"] = [c for c in data["collections"] if c not in doomed]
                    lib._stamped(data, lib.version)
                    data["dateModified"] = stamp

    def _delete_tags(self, lib: Library, tags: list[str]) -> None:
        names = set(tags)
        touched = [d for d in lib.items.values() if any(t["tag"] in names for t in d.get("tags", []))]
        if not touched:
            return
        lib.version += 1
        stamp = self._stamp()
        for data in touched:
            data["tags"] = [t for t in data["tags"] if t["tag"] not in names]
            lib._stamped(data, lib.version)
            data["dateModified"] = stamp
        for name in names:
            lib.deleted["tags"][name] = lib.version

    # -- HTTP -------------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Answer one request (the HTTP server calls this; tests may too)."""
        parts = urlsplit(target)
        path = parts.path.rstrip("/") or "/"
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        lowered = {k.lower(): v for k, v in headers.items()}
        faults = self.faults.take(method, path)
        response: Response | None = None
        for fault in faults:
            if fault.kind == "race" and fault.action is not None:
                with self.lock:
                    fault.action(self)
        for fault in faults:
            if fault.kind == "status":
                hdrs = {**fault.headers}
                response = Response(fault.status, fault.body.encode(), "text/plain", hdrs)
            elif fault.kind == "drop" and not fault.after_apply:
                response = Response(0, drop=True)
        key = self._api_key(lowered, params)
        if response is None:
            try:
                with self.lock:
                    response = self._route(method, path, params, lowered, body, key)
            except ZoteroError as error:
                response = Response(error.status, error.message.encode(), "text/plain", error.headers)
            for fault in faults:
                if fault.kind == "drop" and fault.after_apply:
                    response = Response(0, drop=True)
                elif fault.kind == "backoff":
                    response.headers["Backoff"] = _seconds(fault.seconds)
        objects = 0
        if method == "POST" and body:
            try:
                payload = json.loads(body)
                objects = len(payload) if isinstance(payload, list) else 1
            except ValueError:
                objects = 0
        self.requests.append(RequestRecord(
            method=method, path=path, params={k: v for k, v in params.items() if k != "key"},
            status=response.status, at=time.monotonic(), authorized=key is not None,
            write_token=lowered.get("zotero-write-token"), if_unmodified=lowered.get("if-unmodified-since-version"),
            if_modified=lowered.get("if-modified-since-version"), dropped=response.drop, objects=objects))
        if not response.drop:
            response.headers.setdefault("Zotero-API-Version", "3")
            response.headers.setdefault("Zotero-Schema-Version", str(SCHEMA_VERSION))
        return response

    @staticmethod
    def _api_key(headers: Mapping[str, str], params: Mapping[str, str]) -> str | None:
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip() or None
        return headers.get("zotero-api-key") or params.get("key") or None

    def _authorize(self, lib: Library, key: str | None, *, write: bool) -> None:
        if key is not None and key not in self.keys:
            raise ZoteroError(403, "Invalid key")
        info = self.keys.get(key) if key else None
        if info is not None and info.libraries is not None and lib.prefix not in info.libraries:
            info = None
        if write:
            if info is None:
                raise ZoteroError(403, "Forbidden")
            if not info.write:
                raise ZoteroError(403, "Write access denied")
        elif info is None and not lib.public:
            raise ZoteroError(403, "Forbidden")

    def _route(self, method: str, path: str, params: Mapping[str, str], headers: Mapping[str, str],
               body: bytes, key: str | None) -> Response:
        schema = self._schema_route(method, path, params)
        if schema is not None:
            return schema
        m = re.match(r"^/(users|groups)/(\d+)(/.*)?$", path)
        if not m:
            raise ZoteroError(404, "Not found")
        lib = self.libraries.get(f"/{m.group(1)}/{m.group(2)}")
        rest = m.group(3) or ""
        if lib is None:
            if m.group(1) == "users" and rest == "/groups":
                raise ZoteroError(403, "Forbidden")
            raise ZoteroError(404, "Not found")
        if rest == "/groups" and lib.kind == "user":
            self._authorize(lib, key, write=False)
            return _json(200, [], {"Total-Results": "0"})
        write = method in ("POST", "PUT", "PATCH", "DELETE")
        self._authorize(lib, key, write=write)
        if method == "GET":
            return self._read(lib, rest, params, headers)
        if method not in ("POST", "PUT", "PATCH", "DELETE"):
            raise ZoteroError(405, "Method not allowed")
        return self._write(lib, method, rest, params, headers, body)

    # -- reads --------------------------------------------------------------------------

    def _schema_route(self, method: str, path: str, params: Mapping[str, str]) -> Response | None:
        if method != "GET":
            return None
        if path == "/itemTypes":
            return _json(200, [{"itemType": t, "localized": label} for t, label in ITEM_TYPE_LABELS.items()])
        if path == "/itemFields":
            names = sorted({f for fields in ITEM_FIELDS.values() for f in fields} - {"note", "path"})
            return _json(200, [{"field": f, "localized": FIELD_LABELS.get(f, f)} for f in names])
        if path == "/creatorFields":
            return _json(200, [{"field": "firstName", "localized": "First"},
                               {"field": "lastName", "localized": "Last"},
                               {"field": "name", "localized": "Name"}])
        if path in ("/itemTypeFields", "/itemTypeCreatorTypes", "/items/new"):
            item_type = params.get("itemType", "")
            if item_type not in ITEM_FIELDS:
                raise ZoteroError(400, f"Invalid item type '{item_type}'")
            if path == "/itemTypeFields":
                return _json(200, [{"field": f, "localized": FIELD_LABELS.get(f, f)}
                                   for f in ITEM_FIELDS[item_type]])
            if path == "/itemTypeCreatorTypes":
                return _json(200, [{"creatorType": c, "localized": c[0].upper() + c[1:]}
                                   for c in CREATOR_TYPES.get(item_type, ())])
            template: dict[str, Any] = {"itemType": item_type}
            if item_type not in ("note", "attachment"):
                template["creators"] = [{"creatorType": CREATOR_TYPES[item_type][0], "firstName": "",
                                         "lastName": ""}]
            for name in ITEM_FIELDS[item_type]:
                template[name] = ""
            template.update({"tags": [], "collections": [], "relations": {}})
            return _json(200, template)
        return None

    def _read(self, lib: Library, rest: str, params: Mapping[str, str], headers: Mapping[str, str]) -> Response:
        parts = [p for p in rest.split("/") if p]
        if not parts:
            raise ZoteroError(404, "Not found")
        single = (len(parts) == 2 and parts[0] in ("items", "collections", "searches")
                  and parts[1] not in ("top", "trash"))
        if not single and parts[0] in ("items", "collections", "searches", "settings", "tags"):
            since = headers.get("if-modified-since-version")
            if since is not None and since.isdigit() and lib.version <= int(since):
                return Response(304, b"", "text/plain", {"Last-Modified-Version": str(lib.version)})
        if parts[0] == "deleted":
            if "since" not in params:
                raise ZoteroError(400, "'since' parameter must be provided")
            since_v = _int(params["since"], "since")
            body = {kind: sorted(k for k, v in keys.items() if v > since_v) for kind, keys in lib.deleted.items()}
            return _json(200, body, {"Last-Modified-Version": str(lib.version)})
        if parts[0] == "settings":
            return _json(200, {}, {"Last-Modified-Version": str(lib.version)})
        if parts[0] == "searches":
            if len(parts) > 1:
                raise ZoteroError(404, "Search not found")
            return self._listing(lib, rest, params, [], "searches")
        if parts[0] == "tags":
            return self._tags(lib, rest, params, lib.items.values())
        if parts[0] == "collections":
            return self._read_collections(lib, rest, parts[1:], params)
        if parts[0] == "items":
            return self._read_items(lib, rest, parts[1:], params)
        raise ZoteroError(404, "Not found")

    def _read_collections(self, lib: Library, rest: str, parts: list[str], params: Mapping[str, str]) -> Response:
        if parts and parts[0] != "top":
            coll = lib.collections.get(parts[0])
            if coll is None:
                raise ZoteroError(404, "Collection not found")
            if len(parts) == 1:
                return _json(200, self.collection_json(lib, coll), {"Last-Modified-Version": str(coll["version"])})
            if parts[1] == "collections":
                subs = [c for c in lib.collections.values() if c.get("parentCollection") == parts[0]]
                return self._listing(lib, rest, params, subs, "collections")
            if parts[1] == "items":
                members = [d for d in lib.items.values() if parts[0] in (d.get("collections") or [])]
                if len(parts) > 2 and parts[2] == "top":
                    members = [d for d in members if not d.get("parentItem")]
                return self._listing(lib, rest, params, self._visible(members, params), "items")
            if parts[1] == "tags":
                members = [d for d in lib.items.values() if parts[0] in (d.get("collections") or [])]
                return self._tags(lib, rest, params, members)
            raise ZoteroError(404, "Not found")
        colls = list(lib.collections.values())
        if parts and parts[0] == "top":
            colls = [c for c in colls if not c.get("parentCollection")]
        if "collectionKey" in params:
            wanted = [k for k in params["collectionKey"].split(",") if k]
            if len(wanted) > MAX_KEYS_PER_REQUEST:
                raise ZoteroError(400, f"Cannot request more than {MAX_KEYS_PER_REQUEST} collections at a time")
            colls = [c for c in colls if c["key"] in wanted]
        return self._listing(lib, rest, params, colls, "collections")

    def _visible(self, items: list[dict[str, Any]], params: Mapping[str, str]) -> list[dict[str, Any]]:
        if params.get("includeTrashed") in ("1", "true"):
            return items
        return [d for d in items if not d.get("deleted")]

    def _read_items(self, lib: Library, rest: str, parts: list[str], params: Mapping[str, str]) -> Response:
        if parts and parts[0] not in ("top", "trash"):
            data = lib.items.get(parts[0])
            if data is None:
                raise ZoteroError(404, "Item not found")
            if len(parts) == 1:
                return _json(200, self.item_json(lib, data), {"Last-Modified-Version": str(data["version"])})
            if parts[1] == "children":
                kids = [d for d in lib.items.values() if d.get("parentItem") == parts[0]]
                return self._listing(lib, rest, params, self._visible(kids, params), "items")
            if parts[1] == "tags":
                return self._tags(lib, rest, params, [data])
            raise ZoteroError(404, "Not found")
        if "itemKey" in params:
            wanted = [k for k in params["itemKey"].split(",") if k]
            if len(wanted) > MAX_KEYS_PER_REQUEST:
                raise ZoteroError(400, f"Cannot request more than {MAX_KEYS_PER_REQUEST} items at a time")
            items = [lib.items[k] for k in dict.fromkeys(wanted) if k in lib.items]
        elif "since" in params:
            items = lib.items_since(_int(params["since"], "since"))
        else:
            items = list(lib.items.values())
        if parts and parts[0] == "trash":
            items = [d for d in items if d.get("deleted")]
        else:
            if parts and parts[0] == "top":
                items = [d for d in items if not d.get("parentItem")]
            items = self._visible(items, params)
        item_type = params.get("itemType")
        if item_type:
            if item_type.startswith("-"):
                items = [d for d in items if d["itemType"] != item_type[1:]]
            else:
                items = [d for d in items if d["itemType"] in item_type.split(" || ")]
        if "tag" in params:
            items = [d for d in items if any(t["tag"] == params["tag"] for t in d.get("tags", []))]
        return self._listing(lib, rest, params, items, "items")

    def _listing(self, lib: Library, rest: str, params: Mapping[str, str], objects: list[dict[str, Any]],
                 kind: str) -> Response:
        if "since" in params:
            since = _int(params["since"], "since")
            objects = [o for o in objects if o["version"] > since]
        fmt = params.get("format", "json")
        version_header = {"Last-Modified-Version": str(lib.version)}
        if fmt == "versions":
            return _json(200, {o["key"]: o["version"] for o in objects},
                         {**version_header, "Total-Results": str(len(objects))})
        cache_key = (kind, rest, tuple(sorted((k, v) for k, v in params.items()
                                              if k not in ("start", "limit", "locale", "key"))))
        cached = lib._cache.get(cache_key)
        if cached is not None and cached[0] == lib.version and len(cached[1]) == len(objects):
            objects = cached[1]
        else:
            objects = self._sorted(objects, params, kind)
            lib._cache[cache_key] = (lib.version, objects)
        total = len(objects)
        start = _int(params.get("start", "0"), "start")
        limit = None
        if fmt != "keys" or "limit" in params:
            limit = _int(params.get("limit", "25"), "limit")
            if not 1 <= limit <= 100:
                raise ZoteroError(400, "'limit' must be between 1 and 100")
        page = objects[start: start + limit] if limit is not None else objects[start:]
        hdrs = {**version_header, "Total-Results": str(total)}
        if limit is not None:
            link = self._links(lib, rest, params, start, limit, total, kind)
            if link:
                hdrs["Link"] = link
        if fmt == "keys":
            return Response(200, "\n".join(o["key"] for o in page).encode() + b"\n", "text/plain", hdrs)
        if fmt != "json":
            raise ZoteroError(400, f"Invalid 'format' value '{fmt}'")
        if kind == "searches":
            return _json(200, [], hdrs)
        if kind == "items":
            children = lib.child_counts() if page else {}
            return _json(200, [self.item_json(lib, o, children) for o in page], hdrs)
        return _json(200, [self.collection_json(lib, o) for o in page], hdrs)

    @staticmethod
    def _sorted(objects: list[dict[str, Any]], params: Mapping[str, str], kind: str) -> list[dict[str, Any]]:
        default = "dateModified" if kind == "items" else "title"
        sort = params.get("sort", default)

        def by(o: dict[str, Any]) -> tuple[Any, str]:
            if sort == "title" and kind == "collections":
                return (str(o.get("name", "")).casefold(), o["key"])
            if sort == "version":
                return (o["version"], o["key"])
            return (str(o.get(sort, "")), o["key"])

        if sort not in ("dateAdded", "dateModified", "title", "itemType", "date", "version"):
            raise ZoteroError(400, f"Invalid 'sort' value '{sort}'")
        default_dir = "desc" if sort in ("dateModified", "dateAdded", "version") else "asc"
        direction = params.get("direction", default_dir)
        return sorted(objects, key=by, reverse=direction == "desc")

    def _links(self, lib: Library, rest: str, params: Mapping[str, str], start: int, limit: int, total: int,
               kind: str) -> str:
        def url(at: int) -> str:
            query = {k: v for k, v in params.items() if k not in ("start", "key")}
            if at:
                query["start"] = str(at)
            return f"{self.url}{lib.prefix}{rest}" + ("?" + urlencode(query) if query else "")

        links = []
        if start + limit < total:
            links.append(f'<{url(start + limit)}>; rel="next"')
            last = ((total - 1) // limit) * limit
            links.append(f'<{url(last)}>; rel="last"')
        alternate = f"{WEB}/{lib.name}/{kind}" if lib.kind == "user" else f"{WEB}/groups/{lib.id}/{kind}"
        links.append(f'<{alternate}>; rel="alternate"')
        return ", ".join(links)

    def _tags(self, lib: Library, rest: str, params: Mapping[str, str], items: Iterable[dict[str, Any]]) -> Response:
        counts: dict[str, list[int]] = {}
        for data in items:
            if data.get("deleted"):
                continue
            for tag in data.get("tags", []):
                entry = counts.setdefault(tag["tag"], [tag.get("type", 0), 0])
                entry[1] += 1
        if "since" in params:
            since = _int(params["since"], "since")
            recent = {t["tag"] for d in lib.items.values() if d["version"] > since for t in d.get("tags", [])}
            counts = {k: v for k, v in counts.items() if k in recent}
        names = sorted(counts, key=str.casefold)
        total = len(names)
        start = _int(params.get("start", "0"), "start")
        limit = _int(params.get("limit", "25"), "limit")
        page = names[start: start + limit]
        body = []
        for name in page:
            href = f"{self.url}{lib.prefix}/tags/{quote(name, safe='')}"
            alternate = f"http://zotero.org{lib.prefix}/tags/{quote(name, safe='')}"
            body.append({"tag": name, "links": {"self": {"href": href, "type": "application/json"},
                                                "alternate": {"href": alternate, "type": "text/html"}},
                         "meta": {"type": counts[name][0], "numItems": counts[name][1]}})
        hdrs = {"Last-Modified-Version": str(lib.version), "Total-Results": str(total)}
        link = self._links(lib, rest, params, start, limit, total, "tags")
        if link:
            hdrs["Link"] = link
        return _json(200, body, hdrs)

    # -- writes over HTTP ------------------------------------------------------------------

    def _write(self, lib: Library, method: str, rest: str, params: Mapping[str, str],
               headers: Mapping[str, str], body: bytes) -> Response:
        parts = [p for p in rest.split("/") if p]
        if not parts or parts[0] not in ("items", "collections", "searches", "tags"):
            raise ZoteroError(405, "Method not allowed")
        kind = parts[0]
        header = headers.get("if-unmodified-since-version")
        header_version = _int(header, "If-Unmodified-Since-Version") if header is not None else None
        token = headers.get("zotero-write-token")
        if kind == "searches":
            raise ZoteroError(501, "Saved searches are not supported by this emulator")
        if kind == "tags":
            if method != "DELETE":
                raise ZoteroError(405, "Method not allowed")
            if header_version is None:
                raise ZoteroError(428, "If-Unmodified-Since-Version not provided")
            self._check_library(lib, header_version)
            tags = [t.strip() for t in params.get("tag", "").split("||") if t.strip()]
            if len(tags) > MAX_KEYS_PER_REQUEST:
                raise ZoteroError(413, f"Cannot delete more than {MAX_KEYS_PER_REQUEST} tags at a time")
            self._delete_tags(lib, tags)
            return Response(204, b"", "text/plain", {"Last-Modified-Version": str(lib.version)})
        if len(parts) == 1:
            if method == "POST":
                payload = _payload(body)
                if not isinstance(payload, list):
                    raise ZoteroError(400, "Uploaded data must be a JSON array")
                result = self._write_objects(lib, kind, payload, header_version, token)
                return _json(200, result, {"Last-Modified-Version": str(lib.version)})
            if method == "DELETE":
                if header_version is None:
                    raise ZoteroError(428, "If-Unmodified-Since-Version not provided")
                self._check_library(lib, header_version)
                param = "itemKey" if kind == "items" else "collectionKey"
                keys = [k for k in params.get(param, "").split(",") if k]
                if not keys:
                    raise ZoteroError(400, f"'{param}' parameter must be provided")
                self._delete_objects(lib, kind, keys)
                return Response(204, b"", "text/plain", {"Last-Modified-Version": str(lib.version)})
            raise ZoteroError(405, "Method not allowed")
        key = parts[1]
        store = lib.items if kind == "items" else lib.collections
        existing = store.get(key)
        if method == "DELETE":
            if existing is None:
                raise ZoteroError(404, f"{kind[:-1].capitalize()} not found")
            if header_version is None:
                raise ZoteroError(428, "If-Unmodified-Since-Version not provided")
            self._check_object(kind, existing, header_version)
            self._delete_objects(lib, kind, [key])
            return Response(204, b"", "text/plain", {"Last-Modified-Version": str(lib.version)})
        if method not in ("PUT", "PATCH"):
            raise ZoteroError(405, "Method not allowed")
        payload = _payload(body)
        if not isinstance(payload, dict):
            raise ZoteroError(400, "Uploaded data must be a JSON object")
        json_version = payload.get("version")
        if header_version is not None and json_version is not None and int(json_version) != header_version:
            raise ZoteroError(400, "If-Unmodified-Since-Version does not match the JSON 'version' property")
        precondition = header_version if header_version is not None else json_version
        if existing is None:
            if precondition not in (None, 0):
                raise ZoteroError(404, f"{kind[:-1].capitalize()} doesn't exist")
        else:
            if precondition is None:
                raise ZoteroError(428, "If-Unmodified-Since-Version not provided")
            self._check_object(kind, existing, int(precondition))
        obj = {k: v for k, v in payload.items() if k != "version"}
        obj["key"] = key
        if method == "PUT" and existing is not None:
            obj = self._full_replacement(kind, existing, obj)
        result = self._write_objects(lib, kind, [obj], None if existing is None else lib.version, None)
        if result["failed"]:
            failure = result["failed"]["0"]
            raise ZoteroError(int(failure["code"]), failure["message"])
        return Response(204, b"", "text/plain", {"Last-Modified-Version": str(lib.version)})

    @staticmethod
    def _full_replacement(kind: str, existing: Mapping[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
        if kind == "collections":
            return {"key": obj["key"], "name": obj.get("name", ""),
                    "parentCollection": obj.get("parentCollection", False),
                    "relations": obj.get("relations", {})}
        item_type = obj.get("itemType", existing["itemType"])
        full: dict[str, Any] = {"key": obj["key"], "itemType": item_type}
        for name in ITEM_FIELDS.get(item_type, ()):
            full[name] = obj.get(name, "")
        for name in ("creators", "tags", "collections"):
            if name in existing or name in obj:
                full[name] = obj.get(name, [])
        full["relations"] = obj.get("relations", {})
        full["deleted"] = obj.get("deleted", 0)
        if existing.get("parentItem"):
            full.pop("collections", None)
        return full

    @staticmethod
    def _check_library(lib: Library, header_version: int) -> None:
        if lib.version > header_version:
            raise ZoteroError(412, f"Library has been modified since specified version "
                                   f"(expected {header_version}, found {lib.version})")

    @staticmethod
    def _check_object(kind: str, existing: Mapping[str, Any], version: int) -> None:
        if existing["version"] > version:
            raise ZoteroError(412, f"{kind[:-1].capitalize()} has been modified since specified version "
                                   f"(expected {version}, found {existing['version']})")


def _tag(value: Any) -> dict[str, Any]:
    out = {"tag": value["tag"]}
    if value.get("type"):
        out["type"] = int(value["type"])
    return out


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ZoteroError(400, f"Invalid '{name}' value '{value}'") from None


def _payload(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except ValueError:
        raise ZoteroError(400, "Invalid JSON in uploaded data") from None


def _json(status: int, data: Any, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status, json.dumps(data, ensure_ascii=False).encode(), "application/json", dict(headers or {}))


# -- the HTTP server ----------------------------------------------------------------------


def _handler_class(emulator: ZoteroEmulator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ZoteroEmulator/1"
        disable_nagle_algorithm = True  # headers and body go out as separate writes

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            response = emulator.handle(self.command, self.path, dict(self.headers.items()), body)
            if response.drop:
                self.close_connection = True
                return
            self.send_response(response.status)
            if response.status != 304:
                self.send_header("Content-Type", response.content_type
                                 + ("; charset=utf-8" if response.content_type.startswith("text/") else ""))
                self.send_header("Content-Length", str(len(response.body)))
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if response.status not in (204, 304):
                self.wfile.write(response.body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve  # noqa: N815

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return

    return Handler
