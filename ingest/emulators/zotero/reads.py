"""Answering reads as the Zotero API does: the item-type schema, items and collections
(``since=``, ``format=``, ``itemKey``, sorting, paging with ``Total-Results`` and
``Link``), tags and ``/deleted``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

from ingest.emulators.zotero.common import (
    MAX_KEYS_PER_REQUEST,
    WEB,
    Response,
    ZoteroError,
    int_param,
    json_response,
)
from ingest.emulators.zotero.library import EmulatorBase, Library
from ingest.emulators.zotero_schema import (
    CREATOR_TYPES,
    FIELD_LABELS,
    ITEM_FIELDS,
    ITEM_TYPE_LABELS,
)

__all__ = ["Reading"]


class Reading(EmulatorBase):
    """The emulator's answers to reads."""

    # -- reads --------------------------------------------------------------------------

    def _schema_route(self, method: str, path: str, params: Mapping[str, str]) -> Response | None:
        if method != "GET":
            return None
        if path == "/itemTypes":
            return json_response(200, [{"itemType": t, "localized": label} for t, label in ITEM_TYPE_LABELS.items()])
        if path == "/itemFields":
            names = sorted({f for fields in ITEM_FIELDS.values() for f in fields} - {"note", "path"})
            return json_response(200, [{"field": f, "localized": FIELD_LABELS.get(f, f)} for f in names])
        if path == "/creatorFields":
            return json_response(200, [{"field": "firstName", "localized": "First"},
                               {"field": "lastName", "localized": "Last"},
                               {"field": "name", "localized": "Name"}])
        if path in ("/itemTypeFields", "/itemTypeCreatorTypes", "/items/new"):
            item_type = params.get("itemType", "")
            if item_type not in ITEM_FIELDS:
                raise ZoteroError(400, f"Invalid item type '{item_type}'")
            if path == "/itemTypeFields":
                return json_response(200, [{"field": f, "localized": FIELD_LABELS.get(f, f)}
                                   for f in ITEM_FIELDS[item_type]])
            if path == "/itemTypeCreatorTypes":
                return json_response(200, [{"creatorType": c, "localized": c[0].upper() + c[1:]}
                                   for c in CREATOR_TYPES.get(item_type, ())])
            template: dict[str, Any] = {"itemType": item_type}
            if item_type not in ("note", "attachment"):
                template["creators"] = [{"creatorType": CREATOR_TYPES[item_type][0], "firstName": "",
                                         "lastName": ""}]
            for name in ITEM_FIELDS[item_type]:
                template[name] = ""
            template.update({"tags": [], "collections": [], "relations": {}})
            return json_response(200, template)
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
            since_v = int_param(params["since"], "since")
            body = {kind: sorted(k for k, v in keys.items() if v > since_v) for kind, keys in lib.deleted.items()}
            return json_response(200, body, {"Last-Modified-Version": str(lib.version)})
        if parts[0] == "settings":
            return json_response(200, {}, {"Last-Modified-Version": str(lib.version)})
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
                return json_response(200, self.collection_json(lib, coll),
                                     {"Last-Modified-Version": str(coll["version"])})
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
                return json_response(200, self.item_json(lib, data), {"Last-Modified-Version": str(data["version"])})
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
            items = lib.items_since(int_param(params["since"], "since"))
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
            since = int_param(params["since"], "since")
            objects = [o for o in objects if o["version"] > since]
        fmt = params.get("format", "json")
        version_header = {"Last-Modified-Version": str(lib.version)}
        if fmt == "versions":
            return json_response(200, {o["key"]: o["version"] for o in objects},
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
        start = int_param(params.get("start", "0"), "start")
        limit = None
        if fmt != "keys" or "limit" in params:
            limit = int_param(params.get("limit", "25"), "limit")
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
            return json_response(200, [], hdrs)
        if kind == "items":
            children = lib.child_counts() if page else {}
            return json_response(200, [self.item_json(lib, o, children) for o in page], hdrs)
        return json_response(200, [self.collection_json(lib, o) for o in page], hdrs)

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
            since = int_param(params["since"], "since")
            recent = {t["tag"] for d in lib.items.values() if d["version"] > since for t in d.get("tags", [])}
            counts = {k: v for k, v in counts.items() if k in recent}
        names = sorted(counts, key=str.casefold)
        total = len(names)
        start = int_param(params.get("start", "0"), "start")
        limit = int_param(params.get("limit", "25"), "limit")
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
        return json_response(200, body, hdrs)
