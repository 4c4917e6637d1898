"""The Zotero emulator itself: API keys, routing, faults at the door, writes over HTTP
(preconditions, write tokens, single-object requests), and the loopback HTTP server.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ingest.emulators.zotero.common import (
    MAX_KEYS_PER_REQUEST,
    RequestRecord,
    Response,
    ZoteroError,
    int_param,
    json_payload,
    json_response,
)
from ingest.emulators.zotero.faults import seconds
from ingest.emulators.zotero.library import Library
from ingest.emulators.zotero.reads import Reading
from ingest.emulators.zotero_schema import (
    ITEM_FIELDS,
    SCHEMA_VERSION,
)

__all__ = ["ZoteroEmulator"]


class ZoteroEmulator(Reading):
    """The Zotero Web API v3 on ``http://127.0.0.1:<port>``; use as a context manager (see the
    package's documentation).

    ``max_write_objects`` is the per-request object limit (50 on zotero.org);
    ``clock`` gives the time stamped on ``dateAdded``/``dateModified``; ``seed`` makes
    generated keys reproducible.
    """

    thread_name = "zotero-emulator"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_class(self)

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
                    response.headers["Backoff"] = seconds(fault.seconds)
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
            return json_response(200, [], {"Total-Results": "0"})
        write = method in ("POST", "PUT", "PATCH", "DELETE")
        self._authorize(lib, key, write=write)
        if method == "GET":
            return self._read(lib, rest, params, headers)
        if method not in ("POST", "PUT", "PATCH", "DELETE"):
            raise ZoteroError(405, "Method not allowed")
        return self._write(lib, method, rest, params, headers, body)

    # -- writes over HTTP ------------------------------------------------------------------

    def _write(self, lib: Library, method: str, rest: str, params: Mapping[str, str],
               headers: Mapping[str, str], body: bytes) -> Response:
        parts = [p for p in rest.split("/") if p]
        if not parts or parts[0] not in ("items", "collections", "searches", "tags"):
            raise ZoteroError(405, "Method not allowed")
        kind = parts[0]
        header = headers.get("if-unmodified-since-version")
        header_version = int_param(header, "If-Unmodified-Since-Version") if header is not None else None
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
                payload = json_payload(body)
                if not isinstance(payload, list):
                    raise ZoteroError(400, "Uploaded data must be a JSON array")
                result = self._write_objects(lib, kind, payload, header_version, token)
                return json_response(200, result, {"Last-Modified-Version": str(lib.version)})
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
        payload = json_payload(body)
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
