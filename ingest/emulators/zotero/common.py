"""What every part of the Zotero emulator shares: its errors and answers, the record of
each request, key syntax, and the small converters of API values.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ingest.emulators.zotero_schema import (
    CREATOR_TYPES,
)

__all__ = [
    "KEY",
    "KEY_ALPHABET",
    "MAX_KEYS_PER_REQUEST",
    "WEB",
    "RequestRecord",
    "Response",
    "ZoteroError",
    "creator_summary",
    "int_param",
    "json_response",
    "now_stamp",
    "parsed_date",
    "json_payload",
    "tag_json",
]


KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
KEY = re.compile(rf"^[{KEY_ALPHABET}]{{8}}$")
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


def now_stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_MONTHS = {name: i for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}


def parsed_date(value: str) -> str | None:
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


def creator_summary(item_type: str, creators: list[dict[str, Any]]) -> str | None:
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



def tag_json(value: Any) -> dict[str, Any]:
    out = {"tag": value["tag"]}
    if value.get("type"):
        out["type"] = int(value["type"])
    return out


def int_param(value: str, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ZoteroError(400, f"Invalid '{name}' value '{value}'") from None


def json_payload(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except ValueError:
        raise ZoteroError(400, "Invalid JSON in uploaded data") from None


def json_response(status: int, data: Any, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status, json.dumps(data, ensure_ascii=False).encode(), "application/json", dict(headers or {}))
