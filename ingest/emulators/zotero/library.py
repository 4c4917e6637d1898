"""The Zotero emulator's libraries and their objects, written as the API writes them: one
version bump per write, checks against the item-type schema, trash and deletions. The
same code serves HTTP writes and direct changes (:meth:`Library.create_items` ...).
"""

from __future__ import annotations

import bisect
import copy
import datetime as dt
import random
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ingest.emulators.loopback import LoopbackServer
from ingest.emulators.zotero.common import (
    KEY,
    KEY_ALPHABET,
    MAX_KEYS_PER_REQUEST,
    WEB,
    RequestRecord,
    ZoteroError,
    creator_summary,
    now_stamp,
    parsed_date,
    tag_json,
)
from ingest.emulators.zotero.faults import Faults
from ingest.emulators.zotero_schema import (
    COMMON_KEYS,
    CREATOR_TYPES,
    ITEM_FIELDS,
)

__all__ = ["EmulatorBase", "Key", "Library"]


class Library:
    """One user or group library: objects, versions, deletions and used write tokens."""

    def __init__(self, emulator: EmulatorBase, kind: str, id: int, name: str, public: bool) -> None:
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



@dataclass
class Key:
    user_id: int
    write: bool
    libraries: frozenset[str] | None  # None: every library


class EmulatorBase(LoopbackServer):
    """The emulator's state (libraries, keys, faults, requests), its set-up, the JSON it
    answers with, and the writes that HTTP and direct changes share; the answers to
    requests are :class:`~ingest.emulators.zotero.reads.Reading` and
    :class:`~ingest.emulators.zotero.emulator.ZoteroEmulator`'s."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, max_write_objects: int = 50,
                 clock: Callable[[], dt.datetime] | None = None, seed: int | None = None) -> None:
        super().__init__(host=host, port=port)
        self.max_write_objects = max_write_objects
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self.lock = threading.RLock()
        self.libraries: dict[str, Library] = {}
        self.keys: dict[str, Key] = {}
        self.faults = Faults()
        self.requests: list[RequestRecord] = []
        self._rng = random.Random(seed)

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
        self.keys[key] = Key(int(user_id), write, allowed)

    def request_count(self, method: str | None = None) -> int:
        return sum(1 for r in self.requests if method is None or r.method == method)

    # -- helpers --------------------------------------------------------------------

    def new_key(self, *taken: Mapping[str, object]) -> str:
        while True:
            key = "".join(self._rng.choice(KEY_ALPHABET) for _ in range(8))
            if not any(key in t for t in taken):
                return key

    def _stamp(self) -> str:
        return now_stamp(self.clock())

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
            summary = creator_summary(str(data.get("itemType", "")), data.get("creators") or [])
            if summary:
                meta["creatorSummary"] = summary
            parsed = parsed_date(str(data.get("date") or ""))
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
                if key is not None and not (isinstance(key, str) and KEY.match(key)):
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
        data["tags"] = [tag_json(t) for t in obj.get("tags", [])]
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
                updated["tags"] = [tag_json(t) for t in value]
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
