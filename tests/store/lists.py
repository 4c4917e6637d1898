"""Reading lists a user would have: the bundled one, edited the way people edit theirs."""

from __future__ import annotations

import re
from pathlib import Path

from kg.build import default_reading_list


def my_list(path: Path, *, read: int = 13, drop: int = 2, rename: tuple[str, str] | None = None) -> Path:
    """The bundled list with more papers read (``read`` in all), its last ``drop`` entries
    gone, a section renamed, and a header that states the new counts."""
    lines = default_reading_list().read_text(encoding="utf-8").splitlines()
    rows = [i for i, ln in enumerate(lines) if ln.startswith(("✅", "⬜"))]
    for i in rows[len(rows) - drop:]:
        lines[i] = ""
    rows = rows[: len(rows) - drop]
    already = sum(lines[i].startswith("✅") for i in rows)
    for i in [i for i in rows if lines[i].startswith("⬜")][: read - already]:
        lines[i] = "✅" + lines[i][1:]
    total = len(rows)
    done = sum(lines[i].startswith("✅") for i in rows)
    text = "\n".join(ln for ln in lines) + "\n"
    text = re.sub(r"\d+ entries; \d+ read, \d+ to read\.", f"{total} entries; {done} read, {total - done} to read.",
                  text)
    if rename:
        text = text.replace(rename[0], rename[1])
    path.write_text(text, encoding="utf-8")
    return path


def titles(path: Path) -> list[str]:
    return [ln.split("\t")[1] for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith(("✅", "⬜"))]
