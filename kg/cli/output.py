"""Printing results: rich tables in the terminal, or JSON / CSV for other programs."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from kg.errors import KGError

__all__ = ["FORMATS", "console", "emit", "emit_json", "err_console", "print_error"]

FORMATS = ("table", "json", "csv")
#: Columns no wider than this stay on one line in a table; wider ones wrap.
SHORT_COLUMN = 12


def console() -> Console:
    from rich.console import Console

    return Console(soft_wrap=False)


def err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return "; ".join(str(_plain(v)) for v in value)
    return "" if value is None else value


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def emit(
    records: Sequence[Mapping[str, Any]],
    columns: Sequence[str] | None = None,
    *,
    fmt: str = "table",
    title: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Print ``records`` as a rich table, a JSON array or CSV."""
    columns = list(columns or (records[0].keys() if records else []))
    if fmt == "json":
        emit_json([{c: r.get(c) for c in columns} for r in records])
        return
    if fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        for r in records:
            writer.writerow([_plain(r.get(c)) for c in columns])
        return
    from rich.table import Table

    table = Table(title=title, show_lines=False, header_style="bold")
    cells = [[str(_plain(r.get(c))) for c in columns] for r in records]
    names = [(headers or {}).get(c, c) for c in columns]
    widths = [max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(names)]
    short = [w <= SHORT_COLUMN for w in widths]
    out = console()
    # Ids, statuses, counts and dates stay whole and the prose wraps, as long as that
    # leaves the prose columns room; otherwise every column folds.
    room = out.width - 3 * len(columns) - 1 - sum(w for w, s in zip(widths, short, strict=True) if s)
    keep_short = room >= 16 * short.count(False)
    for name, width, is_short in zip(names, widths, short, strict=True):
        if is_short and keep_short:
            table.add_column(name, no_wrap=True, min_width=width)
        else:
            table.add_column(name, overflow="fold")
    for row in cells:
        table.add_row(*[_escape(value) for value in row])
    out.print(table)


def _escape(value: str) -> str:
    from rich.markup import escape

    return escape(value)


def print_error(error: KGError, *, as_json: bool = False) -> None:
    if as_json:
        sys.stdout.write(json.dumps(error.to_dict(), ensure_ascii=False) + "\n")
        return
    from rich.markup import escape

    out = err_console()
    out.print(f"[bold red]error:[/] {escape(error.message)}")
    if error.hint:
        out.print(f"[yellow]hint:[/] {escape(error.hint)}")


def lines(items: Iterable[str]) -> str:
    return "\n".join(items)
