"""Printing results: tables that fit the terminal, or JSON / CSV for other programs.

Every command takes ``-f/--format`` (:data:`FormatOpt`: table, json or csv) and prints
through :func:`emit` (rows), :func:`emit_json` or :func:`emit_machine` (a summary that
has a table view of its own).

A table never splits a number, an id or a word: each column is at least as wide as its
longest word. Short columns (ids, statuses, counts, dates) stay on one line and the prose
columns share what is left, folding at spaces. When that cannot fit the terminal (a pipe
counts as 80 columns unless ``COLUMNS`` says otherwise), the rows are printed as records:
one block of ``key: value`` lines per row.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.progress import Progress

    from kg.errors import KGError

__all__ = [
    "FORMATS",
    "ERRORS",
    "ErrorFormat",
    "Format",
    "FormatOpt",
    "JsonFlag",
    "CsvFlag",
    "console",
    "emit",
    "emit_json",
    "emit_machine",
    "err_console",
    "note",
    "pick_format",
    "progress_bar",
    "print_error",
    "render",
    "shorten",
]


class Format(StrEnum):
    """The output formats every command takes."""

    table = "table"
    json = "json"
    csv = "csv"


FORMATS = tuple(f.value for f in Format)
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format: table, json or csv.")]
#: The older spellings of ``-f json`` and ``-f csv``, still understood but no longer shown.
JsonFlag = Annotated[bool, typer.Option("--json", hidden=True, help="Same as -f json.")]
CsvFlag = Annotated[bool, typer.Option("--csv", hidden=True, help="Same as -f csv.")]


@dataclass
class ErrorFormat:
    """How an error that ends the command is printed: as JSON where the command prints JSON
    (``kg.cli.State.json_errors`` reads and sets this)."""

    as_json: bool = False


ERRORS = ErrorFormat()


def pick_format(fmt: Format | str, *, as_json: bool = False, as_csv: bool = False) -> Format:
    """The format a command prints in (``--json``/``--csv`` are old spellings of ``-f``), with
    errors reported as JSON when the output is JSON."""
    from kg.errors import KGError

    chosen = Format(str(fmt))
    if as_json and as_csv:
        raise KGError("--json and --csv cannot be combined", hint="Choose one: -f json or -f csv.")
    if as_json or as_csv:
        alias = Format.json if as_json else Format.csv
        if chosen not in (Format.table, alias):
            raise KGError(f"--{alias.value} and -f {chosen.value} disagree", hint=f"Pass only -f {chosen.value}.")
        chosen = alias
    ERRORS.as_json = chosen is Format.json
    return chosen


#: A column whose cells are all at most this wide is short: it stays on one line.
SHORT_COLUMN = 16
#: A prose column narrower than this reads badly; below it a table becomes records.
PROSE_FLOOR = 14


#: Tables printed by this process: a titled table after another is set off by a blank line.
_PRINTED = {"tables": 0}


def console() -> Console:
    from rich.console import Console

    return Console(soft_wrap=False)


def err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def progress_bar(description: str = "{task.description}", *, show: bool = True) -> Progress:
    """A progress bar on stderr (description, bar, done/total, time), gone when finished;
    shown only when ``show`` (callers pass ``fmt is Format.table``) and stderr is a
    terminal, so a pipe or a log gets neither bars nor blank lines."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    stderr = err_console()
    return Progress(TextColumn(description), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=stderr, transient=True, disable=not (show and stderr.is_terminal))


#: The cells a CSV row joins with "; " (:func:`_plain`).
_SEQUENCES = frozenset({list, tuple})


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return "; ".join(str(_plain(v)) for v in value)
    return "" if value is None else value


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``width`` characters with "…"."""
    flat = " ".join(str(text).split())
    if len(flat) <= width:
        return flat
    cut = flat[: width - 1]
    if " " in cut and not flat[width - 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.") + "…"


def terminal_width(stream: Any = None) -> int:
    """The width to fold at: ``COLUMNS`` if set, else the terminal's (of ``stream``, default
    stderr), else 80 (a pipe or a log)."""
    import os

    try:
        return max(20, int(os.environ["COLUMNS"]))
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size((stream or sys.stderr).fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 80


def note(*lines: str) -> None:
    """Status notes on stderr (which source answered, what was left out), as plain text folded
    at the terminal's width without splitting a word; no rich console, so it costs nothing."""
    width = terminal_width()
    folded = [part for line in lines
              for part in (textwrap.wrap(line, width=width, break_long_words=False, break_on_hyphens=False) or [""])]
    sys.stderr.write("".join(part + "\n" for part in folded))
    sys.stderr.flush()


def emit_json(data: Any) -> None:
    if isinstance(data, list):
        emit_json_items(data)
        return
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def _flatten(data: Any, prefix: str = "") -> list[dict[str, Any]]:
    """A nested summary as ``key, value`` rows (``reading_list.entries``, lists joined)."""
    if isinstance(data, Mapping):
        rows: list[dict[str, Any]] = []
        for key, value in data.items():
            rows += _flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(data, list | tuple) and any(isinstance(v, Mapping | list | tuple) for v in data):
        return [row for i, value in enumerate(data) for row in _flatten(value, f"{prefix}.{i}")]
    return [{"key": prefix, "value": _plain(data)}]


def emit_machine(
    fmt: str,
    data: Any,
    records: Sequence[Mapping[str, Any]] | None = None,
    columns: Sequence[str] | None = None,
) -> bool:
    """Print ``data`` for ``-f json``, or ``records`` (default: ``data`` flattened to key/value
    rows) for ``-f csv``, and return True; return False for ``-f table``, so the caller
    prints its own view::

        if emit_machine(fmt, summary):
            return
    """
    fmt = str(fmt)
    if fmt == Format.json:
        emit_json(data)
        return True
    if fmt == Format.csv:
        if records is None:
            records, columns = _flatten(data), ["key", "value"]
        emit(records, columns, fmt="csv")
        return True
    return False


def emit(
    records: Sequence[Mapping[str, Any]],
    columns: Sequence[str] | None = None,
    *,
    fmt: str = "table",
    title: str | None = None,
    headers: Mapping[str, str] | None = None,
    short: Mapping[str, int] | None = None,
    lines: bool = False,
    keep: Sequence[str] = (),
) -> None:
    """Print ``records`` as a table that fits the terminal, a JSON array or CSV.

    ``headers`` renames columns in the table (JSON and CSV keep the keys); ``short`` cuts
    the named columns to that many characters in the table only (JSON and CSV are whole);
    ``lines`` rules a line between rows; ``keep`` names columns whose cells stay on one line
    while the table fits (labels beside long prose).
    """
    columns = list(columns or (records[0].keys() if records else []))
    fmt = str(fmt)
    if fmt == Format.json:
        emit_json([{c: r.get(c) for c in columns} for r in records])
        return
    if fmt == Format.csv:
        emit_csv(records, columns)
        return
    out = console()
    if _PRINTED["tables"] and title:
        out.print()
    _PRINTED["tables"] += 1
    if not columns:  # nothing to lay out: the title alone (the caller says why)
        if title:
            from rich.text import Text

            out.print(Text(title, style="bold"))
        return
    out.print(_renderable(records, columns, width=out.width, title=title, headers=headers, short=short, lines=lines,
                          keep=keep), crop=False)


def emit_csv(records: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """``records`` as CSV under a header of ``columns``, each row written as it comes."""
    writer = csv.writer(sys.stdout, lineterminator="\n")  # (None is written as "")
    writer.writerow(columns)
    writer.writerows([v if v.__class__ not in _SEQUENCES else _plain(v) for v in map(r.get, columns)]
                     for r in records)


def emit_json_items(items: Iterable[Any]) -> None:
    """A JSON array (indented as ``json.dumps(..., indent=2)`` writes it), each item written
    as it comes: every list :func:`emit_json` writes."""
    count = 0
    sys.stdout.write("[")
    for count, item in enumerate(items, start=1):
        sys.stdout.write(("," if count > 1 else "") + "\n" + textwrap.indent(
            json.dumps(item, ensure_ascii=False, indent=2, default=str), "  "))
    sys.stdout.write("\n]\n" if count else "]\n")


#: A table of more rows than this prints as its rows come (see :func:`emit_stream`).
STREAM_ABOVE = 500


def emit_stream(
    records: Iterable[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    title: Callable[[int], str],
    streamed_title: str,
    footer: Callable[[int], str],
    short: Mapping[str, int] | None = None,
) -> None:
    """Print rows that may be many as a table, without holding them all.

    Up to :data:`STREAM_ABOVE` rows print as :func:`emit` prints them, under ``title(n)``
    (``short`` cuts cells as there).
    Beyond that the columns are laid out on the first rows, and every row is written as it
    comes, folded to those widths, under ``streamed_title`` and above ``footer(n)``. (rich
    lays out a table's every row before printing any: about 3 ms a row, a minute for 20k.)
    """
    from itertools import chain, islice

    rows = iter(records)
    head = list(islice(rows, STREAM_ABOVE + 1))
    if len(head) <= STREAM_ABOVE:
        emit(head, columns, title=title(len(head)), short=short)
        return
    out = console()
    names = [c.replace("_", " ") for c in columns]
    limits = [(short or {}).get(c) for c in columns]
    cells = [[_cell(r.get(c), n) for c, n in zip(columns, limits, strict=True)] for r in head]
    cols = [_measure(name, [row[i] for row in cells]) for i, name in enumerate(names)]
    widths = _layout(cols, out.width)
    from rich.text import Text

    out.print(Text(streamed_title, style="bold"), crop=False)
    out.file.flush()
    # From here plain writes, so that a reader that stops (| head) raises BrokenPipeError
    # for the caller (rich's console would exit 1 instead).
    write = sys.stdout.write
    count = 0
    every = chain(cells, ([_cell(r.get(c), n) for c, n in zip(columns, limits, strict=True)] for r in rows))
    if widths is None:
        plain = _plain_console(out.width)
        while block := list(islice(every, STREAM_ABOVE)):
            plain.print()
            plain.print(_records(names, block, width=out.width, title=None), crop=False)
            write(plain.export_text())
            count += len(block)
    else:
        write("\n".join(_line_up([_fold(n, _wrapper(w)) for n, w in zip(names, widths, strict=True)], widths,
                                 [False] * len(widths))) + "\n")
        write("\u2500" * (sum(widths) + GUTTER * (len(widths) - 1)) + "\n")
        wrappers = [None if col.whole else _wrapper(w) for col, w in zip(cols, widths, strict=True)]
        numeric = [col.numeric for col in cols]
        for row in every:
            write("\n".join(_line_up([_fold(v, wrap) for v, wrap in zip(row, wrappers, strict=True)], widths,
                                     numeric)) + "\n")
            count += 1
        write("\n")
    write(footer(count) + "\n")
    sys.stdout.flush()


def reader_gone() -> None:
    """The reader stopped (``| head``): not an error of ours. Later writes go nowhere."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _plain_console(width: int) -> Console:
    """A console that keeps what it prints, as plain text, for :meth:`Console.export_text`."""
    from rich.console import Console

    return Console(width=width, record=True, color_system=None, force_terminal=False, soft_wrap=False,
                   file=io.StringIO())


def _line_up(values: Sequence[str], widths: Sequence[int], right: Sequence[bool]) -> list[str]:
    """The lines of one table row: each value's lines padded to its column (a line wider than
    its column is cut into pieces of that width, as rich folds it), three spaces between."""
    from rich.cells import cell_len, chop_cells

    columns = []
    for value, width in zip(values, widths, strict=True):
        lines = [piece for line in (value.splitlines() or [""])
                 for piece in (chop_cells(line, width) if cell_len(line) > width else [line])]
        columns.append(lines)
    height = max(len(c) for c in columns)
    out = []
    for k in range(height):
        parts = []
        for lines, width, flush_right in zip(columns, widths, right, strict=True):
            text = lines[k] if k < len(lines) else ""
            pad = " " * (width - cell_len(text))
            parts.append(pad + text if flush_right else text + pad)
        out.append((" " * GUTTER).join(parts))
    return out


def render(
    records: Sequence[Mapping[str, Any]],
    columns: Sequence[str] | None = None,
    *,
    width: int,
    title: str | None = None,
    headers: Mapping[str, str] | None = None,
    short: Mapping[str, int] | None = None,
    lines: bool = False,
) -> str:
    """The text :func:`emit` prints for a terminal ``width`` columns wide (no colours)."""
    columns = list(columns or (records[0].keys() if records else []))
    out = _plain_console(width)
    out.print(_renderable(records, columns, width=width, title=title, headers=headers, short=short, lines=lines),
              crop=False)
    return out.export_text()


@dataclass
class _Column:
    name: str
    natural: int  # the widest cell line, or the header if wider
    cells: int  # the widest cell line
    header: int  # the header's longest word: headers fold at spaces
    word: int  # the longest word of a cell
    piece: int  # the longest piece of a cell when hyphenated compounds may break after a hyphen
    spaced: bool  # some cell has a space to fold at
    numeric: bool
    typical: int  # the mean width of its non-empty cells: how the spare room is shared

    @property
    def whole(self) -> bool:
        """Ids, statuses, counts and dates: one line each (the header may fold)."""
        return self.cells <= SHORT_COLUMN or not self.spaced

    @property
    def floor(self) -> int:
        if self.whole:
            return max(self.cells, self.header)
        return max(self.piece, self.header, min(self.natural, PROSE_FLOOR))


def _wrapper(width: int) -> textwrap.TextWrapper:
    # Breaks at spaces, and after the hyphen of a compound of letters ("Communication-|Computation");
    # never inside a word, a number, a date or "S_{t-1}".
    return textwrap.TextWrapper(width=max(width, 1), break_long_words=False, break_on_hyphens=True)


def _measure(name: str, cells: list[str]) -> _Column:
    from rich.cells import cell_len

    lines = [line for c in cells for line in (c.splitlines() or [""])]
    pieces = textwrap.TextWrapper.wordsep_re  # the pieces _wrapper breaks lines between
    return _Column(
        name=name,
        natural=max([cell_len(name), *(cell_len(line) for line in lines)]),
        cells=max((cell_len(line) for line in lines), default=0),
        header=max((cell_len(w) for w in name.split()), default=0),
        word=max((cell_len(w) for line in lines for w in line.split()), default=0),
        piece=max((cell_len(p.strip()) for line in lines for p in pieces.split(line) if p), default=0),
        spaced=any(" " in c.strip() for c in cells),
        numeric=any(cells) and all(_is_number(c) for c in cells if c),
        typical=max(1, sum(cell_len(c) for c in cells if c) // max(1, sum(1 for c in cells if c))),
    )


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


#: What a table costs beyond its cells: a space, a rule and a space between two columns.
GUTTER = 3


def _layout(cols: list[_Column], width: int, keep: Sequence[int] = ()) -> list[int] | None:
    """Column widths that fit ``width`` without splitting a word, or None (print records);
    the ``keep`` columns get their natural width when the others still fit."""
    room = width - GUTTER * (len(cols) - 1)
    floor = [c.floor for c in cols]
    kept = [max(c.natural, f) if i in keep else f for i, (c, f) in enumerate(zip(cols, floor, strict=True))]
    if sum(kept) <= room:
        floor = kept
    if sum(floor) > room:
        # Let short phrases ("arXiv preprint") fold too before giving up on the table.
        floor = [max(c.word, c.header) if c.whole and c.spaced else f for c, f in zip(cols, floor, strict=True)]
        if sum(floor) > room:
            return None
    widths = list(floor)
    spare = room - sum(widths)
    # Give what is left to the columns that want more, in proportion to their typical cell.
    while spare > 0:
        wanting = [i for i, c in enumerate(cols) if widths[i] < c.natural]
        if not wanting:
            break
        total = sum(cols[i].typical for i in wanting) or 1
        given = 0
        for i in wanting:
            share = max(1, cols[i].typical * spare // total)
            share = min(share, cols[i].natural - widths[i], spare - given)
            widths[i] += share
            given += share
            if given >= spare:
                break
        spare -= given
    return widths


def _renderable(
    records: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    width: int,
    title: str | None,
    headers: Mapping[str, str] | None,
    short: Mapping[str, int] | None,
    lines: bool,
    keep: Sequence[str] = (),
) -> RenderableType:
    from rich import box
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    cells = [[_cell(r.get(c), (short or {}).get(c)) for c in columns] for r in records]
    # Headers are labels: techniques_in_lineage reads (and folds) as "techniques in lineage".
    names = [(headers or {}).get(c) or c.replace("_", " ") for c in columns]
    cols = [_measure(name, [row[i] for row in cells]) for i, name in enumerate(names)]
    widths = _layout(cols, width, [i for i, c in enumerate(columns) if c in keep]) if columns else []
    if widths is None:
        return _records(names, cells, width=width, title=title)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_lines=lines, header_style="bold")
    for col, w in zip(cols, widths, strict=True):
        table.add_column(escape(col.name), width=w, overflow="fold",
                         justify="right" if col.numeric else "left")
    wrappers = [None if col.whole else _wrapper(w) for col, w in zip(cols, widths, strict=True)]
    for row in cells:
        table.add_row(*[escape(_fold(value, wrap)) for value, wrap in zip(row, wrappers, strict=True)])
    return Group(Text(title, style="bold"), table) if title else table


def _fold(value: str, wrap: textwrap.TextWrapper | None) -> str:
    """A prose cell folded to its column (rich then leaves it as it is); short cells unchanged."""
    if wrap is None:
        return value
    return "\n".join(part for line in (value.splitlines() or [""]) for part in (wrap.wrap(line) or [""]))


def _cell(value: Any, limit: int | None) -> str:
    text = str(_plain(value))
    return shorten(text, limit) if limit else text


def _records(names: list[str], cells: list[list[str]], *, width: int, title: str | None) -> RenderableType:
    """One block of ``key: value`` lines per row; values fold at spaces, words stay whole."""
    from rich.console import Group
    from rich.text import Text

    key_width = max(len(n) for n in names) + 2
    room = max(width - key_width, 20)
    blocks: list[RenderableType] = [Text(title, style="bold")] if title else []
    for index, row in enumerate(cells):
        if index or title:
            blocks.append(Text(""))
        for position, (name, value) in enumerate(zip(names, row, strict=True)):
            if not value and position:
                continue  # an empty field says nothing in a record
            text = Text(no_wrap=True, overflow="ignore")
            text.append(f"{name}:".ljust(key_width), style="bold")
            folded = [piece for line in (value.splitlines() or [""])
                      for part in (textwrap.wrap(line, room, break_long_words=False, break_on_hyphens=False)
                                   or [""])
                      for piece in _pieces(part, room)]
            text.append(("\n" + " " * key_width).join(folded))
            blocks.append(text)
    return Group(*blocks)


def _pieces(word: str, room: int) -> list[str]:
    """A line longer than ``room`` (one long word: an IRI, a path) cut after its last ``/``
    that fits, or at ``room`` where none does, so that a record stays within the width."""
    pieces = []
    while len(word) > room:
        cut = word.rfind("/", 1, room) + 1 or room
        pieces.append(word[:cut])
        word = word[cut:]
    return [*pieces, word]


def print_error(error: KGError, *, as_json: bool = False) -> None:
    if as_json:
        sys.stdout.write(json.dumps(error.to_dict(), ensure_ascii=False) + "\n")
        return
    from rich.markup import escape

    out = err_console()
    wrap = out.is_terminal  # in a pipe or a log, one line per message: what grep finds
    out.print(f"[bold red]error:[/] {escape(error.message)}", soft_wrap=not wrap)
    if error.hint:
        out.print(f"[yellow]hint:[/] {escape(error.hint)}", soft_wrap=not wrap)
