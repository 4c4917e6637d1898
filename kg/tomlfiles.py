"""Hand-edited TOML files whose every error names the file and the line: the catalog's
files under ``kg/data`` (:mod:`kg.catalog`) and the reader's techniques file of ``kg
technique import`` (:mod:`kg.owntech.tomlfile`), which shares the catalog's schema.

What belongs here: reading such a file, finding the line of a ``[[table]]`` entry or of a
key in it, and the forms every such file writes ids and dates in. What does not: what the
tables mean (their checks stay with their readers).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from kg.errors import DataError

__all__ = ["DATE", "SLUG", "entry_line", "read_toml"]

#: An id (of a technique, a paper, a category): a lowercase slug of a-z, 0-9, '.' and '-'.
SLUG = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")
#: A date: YYYY, YYYY-MM or YYYY-MM-DD (the year, month and day as groups).
DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def read_toml(path: Path, error: type[DataError] = DataError) -> tuple[dict[str, Any], str]:
    """The parsed file and its text; an unreadable or malformed file raises ``error`` with its line."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read the file: {exc.strerror or exc}", path=str(path)) from None
    try:
        return tomllib.loads(raw), raw
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise error(
            f"not valid TOML: {exc}",
            path=str(path),
            line=int(m.group(1)) if m else None,
            hint="Fix the TOML syntax at that line (unbalanced quotes or brackets are common).",
        ) from None


def entry_line(raw: str, header: str, index: int, key: str | None = None, *, ends: str | None = None) -> int | None:
    """Line of the ``index``-th ``[[header]]`` entry of the text ``raw``, or of ``key = `` inside
    it (the entry's own line where it lacks the key). The entry ends at the next line that
    starts with ``ends`` (default: the next ``[[header]]``)."""
    lines = raw.splitlines()
    seen = -1
    for number, line in enumerate(lines, start=1):
        if line.strip() == f"[[{header}]]":
            seen += 1
            if seen == index:
                if key is None:
                    return number
                for offset, inner in enumerate(lines[number:], start=number + 1):
                    stripped = inner.strip()
                    if stripped.startswith(ends or f"[[{header}]]"):
                        break
                    if re.match(rf"^{re.escape(key)}\s*=", stripped):
                        return offset
                return number
    return None
