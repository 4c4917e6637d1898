"""``kg analytics``: the graph as DuckDB tables, analyses with charts, ad-hoc SQL, Parquet.

The analytics file lives beside the store (``DIR.analytics.duckdb`` for an embedded
store in ``DIR``; see :func:`kg.analytics.database_path`). Analyses refresh it first
(only what changed in the graph is made again) unless ``--no-refresh`` is given; a
missing or corrupt file is rebuilt from the graph with a message.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.export import PrivateOpt
from kg.cli.output import CsvFlag, Format, FormatOpt, JsonFlag, pick_format

if TYPE_CHECKING:
    from kg.analytics.analyses import Report

__all__ = ["app"]

app = typer.Typer(
    help="Materialise the graph into DuckDB and ask it questions: reading progress, papers, "
    "lineage, adoption, the uptake of techniques in the literature, authors, kernel coverage; charts, ad-hoc "
    "SQL and Parquet export.",
    no_args_is_help=True,
)

_DB: dict[str, Path | None] = {"path": None}


@app.callback()
def _options(
    db: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs Optional here
        typer.Option(
            "--db",
            envvar="KG_ANALYTICS_DB",
            help="The DuckDB analytics file. Default: DIR.analytics.duckdb beside an embedded "
            "store in DIR; for an endpoint, a file in ~/.local/share/techkg/analytics.",
            show_default=False,
        ),
    ] = None,
) -> None:
    _DB["path"] = db


class Period(StrEnum):
    week = "week"
    month = "month"
    quarter = "quarter"
    year = "year"


class Scheme(StrEnum):
    reading = "reading"
    technique = "technique"


ReportFormatOpt = Annotated[Format, typer.Option(
    "--format", "-f", help="table; json (every section, or the one --section names); csv (one section: "
    "--section, default the first).")]
SectionOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--section", help="Only this section (for -f csv, default: the first)."
    ),
]
ChartOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--chart", help="Also draw the chart into this file (.png or .svg).", dir_okay=False
    ),
]
RefreshOpt = Annotated[
    bool,
    typer.Option(
        "--refresh/--no-refresh",
        help="Bring the analytics file up to date with the graph first "
        "(cheap when nothing changed).",
    ),
]
TopOpt = Annotated[
    int, typer.Option("--top", min=1, help="How many rows the ranked sections keep.")
]
AsOfOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--as-of", help="Date the ages are measured to, YYYY-MM-DD (default: today, UTC)."
    ),
]


def _path() -> Path:
    from kg.analytics import database_path

    return _DB["path"] or database_path(state().store_spec)


def _say(message: str, style: str = "dim") -> None:
    from rich.markup import escape

    from kg.cli.output import err_console

    err_console().print(f"[{style}]{escape(message)}[/]")


def _run_build(full: bool) -> Any:
    from kg.analytics import build
    from kg.analytics.suggest import current_view, from_store, store_dir

    path = _path()
    folder = store_dir(state().store_spec)
    view = current_view(folder) if folder is not None else None  # before the reader opens it
    from kg.cli.output import progress_bar

    with progress_bar() as bar:
        tasks: dict[str, Any] = {}

        def progress(step: str, done: int, total: int) -> None:
            label = {"staging": "Reading the graph", "tables": "Making tables",
                     "answers": "Storing answers"}.get(step, step)
            if step not in tasks:
                tasks[step] = bar.add_task(label, total=total)
            bar.update(tasks[step], completed=done, total=total)

        report = build(state().reader(), path, full=full, progress=progress)
    from_store(state().reader(), state().store_spec, None, view=view).close()  # kg suggest's memo: see there
    if report.message:
        _say(report.message, "yellow")
    return report


#: A store of at least this many triples has stale analytics tables brought up to date
#: before a query they answer (``$KG_AUTO_BUILD`` sets another; 0: never): there SPARQL
#: takes seconds to minutes, a build of what changed less. Below it SPARQL answers at once.
AUTO_BUILD = 1_000_000


def refresh_tables(store: Any, why: str) -> bool:
    """Whether the stale (or missing) analytics tables of ``store`` were brought up to date
    for a query they answer (see kg.answer.answer): on an embedded store of
    :data:`AUTO_BUILD` triples or more, with a line and a progress bar on stderr; a build
    that cannot run (another process writes the file) leaves the answer to SPARQL."""
    from kg.analytics.files import graph_states, store_dir
    from kg.errors import KGError
    from kg.settings import count_setting

    threshold = count_setting("KG_AUTO_BUILD", AUTO_BUILD)
    if not threshold or store_dir(state().store_spec) is None:
        return False
    if sum(s.triples or 0 for s in graph_states(store).values()) < threshold:
        return False
    _say(f"{why}: bringing them up to date first (kg analytics build)")
    try:
        _run_build(full=False)
    except KGError as error:
        _say(f"the analytics tables were not brought up to date ({error.message}); the store answers", "yellow")
        return False
    return True


def _database(refresh: bool) -> Path:
    """The analytics file, made or refreshed from the graph as needed."""
    from kg.analytics import inspect

    path = _path()
    problem = inspect(path)
    if problem is None and not refresh:
        return path
    report = _run_build(full=False)  # reads the store as a reader: never blocked by a writer
    if problem == "missing":
        _say(f"built {path} from the graph in {report.seconds:.1f} s")
    elif report.mode != "up to date":
        _say(
            f"refreshed {len(report.rebuilt)} tables from changed graphs: "
            f"{', '.join(report.changed_graphs)}"
        )
    return path


def _emit_report(report: Report, *, fmt: Format, section: str | None) -> None:
    from rich.markup import escape

    from kg.cli.output import emit, emit_json

    if fmt is Format.json:
        emit_json(report.section(section).rows if section else report.to_dict())
        return
    if fmt is Format.csv:
        chosen = report.section(section) if section else report.sections[0]
        emit(chosen.rows, chosen.columns, fmt="csv")
        return
    from kg.cli.output import console

    shown = [report.section(section)] if section else report.sections
    notes = {s.empty for s in shown}
    if all(not s.rows for s in shown) and len(notes) == 1 and None not in notes:  # nothing at all: say so once
        what = shown[0].title if section else f"kg analytics {report.name}"
        console().print(f"[bold]{escape(what)}[/]: nothing to show yet.")
        console().print(escape(str(notes.pop())))
        return
    for s in shown:
        if s.rows or not s.empty:
            emit(s.rows, s.columns, title=s.title)
        else:  # no empty table: why there is nothing, and what to run
            emit([], [], title=s.title)
            console().print(f"[dim]{escape(s.empty)}[/]")


def _analysis(
    name: str,
    *,
    refresh: bool,
    fmt: Format,
    json_out: bool,
    csv_out: bool,
    section: str | None,
    chart: Path | None,
    **options: Any,
) -> None:
    from kg.analytics import analyses, connect
    from kg.errors import AnalyticsError

    fmt = pick_format(fmt, as_json=json_out, as_csv=csv_out)
    if chart is not None:
        from kg.analytics.charts import CHARTS, FORMATS

        if name not in CHARTS:
            raise AnalyticsError(
                f"the {name} analysis has no chart", hint="Charts: " + ", ".join(CHARTS) + "."
            )
        if chart.suffix.lower() not in FORMATS:
            raise AnalyticsError(
                f"cannot write a chart to {chart}: unknown extension {chart.suffix or '(none)'}",
                hint="Give a file name ending in .png or .svg.",
            )
    path = _database(refresh)
    con = connect(path, read_only=True)
    try:
        report = analyses.run(con, name, **options)
    finally:
        con.close()
    _emit_report(report, fmt=fmt, section=section)
    if chart is not None:
        from kg.analytics.charts import save

        save(report, chart)
        _say(f"chart written to {chart}")


@app.command("build")
def build_(
    full: Annotated[
        bool, typer.Option("--full", help="Start afresh instead of updating what changed.")
    ] = False,
    fmt: FormatOpt = Format.table,
    json_out: JsonFlag = False,
) -> None:
    """Materialise the graph into DuckDB; only tables whose graphs changed are made again."""
    import textwrap

    from kg.cli.output import console, emit, emit_machine

    fmt = pick_format(fmt, as_json=json_out)
    report = _run_build(full)
    if fmt is Format.csv:
        emit([{"table": t, "rows": n} for t, n in report.rebuilt.items()], ["table", "rows"], fmt="csv")
        return
    if emit_machine(fmt, report.to_dict()):
        return
    out = console()
    if report.mode == "up to date":
        out.print(f"{report.path} is up to date with the graph ({len(report.tables)} tables).")
        return
    out.print(
        f"[bold]{report.mode.capitalize()} build[/] of {report.path} in {report.seconds:.1f} s"
        + (f" ({report.reason})" if report.reason and report.reason != "missing" else "")
    )
    graphs = [g + (" (from its import copy)" if g in report.from_copies else "") for g in report.changed_graphs]
    lines = [("graphs read again", f"{', '.join(graphs) or 'none'} ({report.staged_facts:,} facts)"),
             ("answers made", ", ".join(report.answers) or "none")]
    if report.patched:
        lines.append(("answers patched", f"{', '.join(report.patched)} (the rows of the papers whose status changed)"))
    for label, value in lines:  # a value too long for the line folds under itself, not under the labels
        out.print(textwrap.fill(value, width=out.width, initial_indent=f"  {label:<17}  ", subsequent_indent=" " * 21,
                                break_long_words=False, break_on_hyphens=False), markup=False)
    emit(
        [{"table": t, "rows": n} for t, n in report.rebuilt.items()],
        ["table", "rows"],
        title="Tables made",
    )


#: The options of the analyses' commands: name → (annotation, default).
_OPTIONS: dict[str, tuple[Any, Any]] = {
    "by": (Annotated[Scheme, typer.Option(
        "--by", help="Categories: reading-list sections or technique categories.")], Scheme.reading),
    "period": (Annotated[Period, typer.Option("--period", help="Time unit of the timeline.")], Period.month),
    "top": (TopOpt, 10),
    "stale_days": (Annotated[int, typer.Option(
        "--stale-days", min=1, help="No push for this long counts as stale.")], 180),
    "as_of": (AsOfOpt, None),
    "all_": (Annotated[bool, typer.Option("--all", help="Include techniques not on the comparison page.")], False),
    "chart": (ChartOpt, None),
    "fmt": (ReportFormatOpt, Format.table),
    "json_out": (JsonFlag, False),
    "csv_out": (CsvFlag, False),
    "section": (SectionOpt, None),
    "refresh": (RefreshOpt, True),
    "influential": (Annotated[bool, typer.Option(
        "--influential", help="Instead: the papers cited most influentially or for their method, and the citations "
                              "per intent (from kg ingest citations).")], False),
}
#: The options every analysis takes, in the order its help lists them.
_SHARED = ("fmt", "json_out", "csv_out", "section", "refresh")


@dataclass(frozen=True)
class _Analysis:
    """One ``kg analytics NAME`` command: the analysis of kg.analytics.analyses it runs, its
    help, and its options in the order its help lists them (those not shared, nor ``chart``,
    become the analysis' keyword arguments)."""

    name: str
    help: str
    options: tuple[str, ...]


_ANALYSES = (
    _Analysis("progress", "Reading progress per category and over time, the backlog, and the days from added to read.",
              ("by", "period", "as_of", "chart", *_SHARED)),
    _Analysis("papers", "Papers per year, per technique category and per organisation.",
              ("top", "chart", *_SHARED, "influential")),
    _Analysis("lineage", "Lineage statistics: depth, fan-out, most derived-from techniques, longest chains.",
              ("top", *_SHARED)),
    _Analysis("adoption", "Repository stars and growth between snapshots; the most active and the stale ones.",
              ("top", "stale_days", "as_of", "chart", *_SHARED)),
    _Analysis("authors", "The most prolific authors and organisations, and co-authorship between organisations.",
              ("top", *_SHARED)),
    _Analysis("kernels", "Reference-kernel coverage per category: verified, failing, not run and none.",
              ("all_", "chart", *_SHARED)),
)


def _analysis_command(spec: _Analysis) -> Callable[..., None]:
    """The command function of ``spec``, with the signature typer reads its options from."""

    def command(**given: Any) -> None:
        name = "influence" if given.pop("influential", False) else spec.name  # papers --influential
        fmt, json_out, csv_out, section, refresh = (given.pop(option) for option in _SHARED)
        chart = given.pop("chart", None)
        arguments = {option.rstrip("_"): value.value if isinstance(value, StrEnum) else value
                     for option, value in given.items()}
        _analysis(name, refresh=refresh, fmt=fmt, json_out=json_out, csv_out=csv_out, section=section, chart=chart,
                  **arguments)

    command.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter(option, inspect.Parameter.KEYWORD_ONLY, annotation=_OPTIONS[option][0],
                          default=_OPTIONS[option][1]) for option in spec.options])
    command.__name__ = spec.name
    command.__doc__ = spec.help
    return command


for _spec in _ANALYSES:
    app.command(_spec.name)(_analysis_command(_spec))


@app.command()
def uptake(
    technique: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        help="Only this technique (name, alias or id); default: the techniques with the most papers.",
        show_default=False)] = None,
    top: TopOpt = 10,
    chart: ChartOpt = None,
    fmt: ReportFormatOpt = Format.table,
    json_out: JsonFlag = False,
    csv_out: CsvFlag = False,
    section: SectionOpt = None,
    refresh: RefreshOpt = True,
) -> None:
    """Papers per technique per year (that introduce, extend, use or evaluate it, and those that only mention it):
    each technique's adoption curve in the literature, from the links kg link makes and you decide."""
    iri = None
    if technique:
        from kg.resolve import resolve_technique

        iri = resolve_technique(state().reader(), technique).value
    _analysis(
        "uptake",
        refresh=refresh,
        fmt=fmt,
        json_out=json_out,
        csv_out=csv_out,
        section=section,
        chart=chart,
        top=top,
        technique=iri,
    )


@app.command()
def sql(
    query: Annotated[
        str, typer.Argument(help='SQL for DuckDB, e.g. "SELECT * FROM papers LIMIT 5".')
    ],
    fmt: FormatOpt = Format.table,
    json_out: JsonFlag = False,
    csv_out: CsvFlag = False,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, help="Rows shown in a terminal table.")
    ] = 100,
    refresh: RefreshOpt = False,
) -> None:
    """Run ad-hoc SQL on the analytics file, opened read-only: SELECT, SHOW TABLES, DESCRIBE."""
    from kg.analytics import connect
    from kg.analytics.sql import run_sql
    from kg.cli.output import emit, emit_json, err_console

    fmt = pick_format(fmt, as_json=json_out, as_csv=csv_out)
    path = _database(refresh)
    con = connect(path, read_only=True)
    try:
        columns, rows = run_sql(con, query)
    finally:
        con.close()
    if fmt is Format.json:
        emit_json(rows)
    elif fmt is Format.csv:
        emit(rows, columns, fmt="csv")
    elif not columns:
        err_console().print("OK")
    else:
        emit(rows[:max_rows], columns)
        if len(rows) > max_rows:
            err_console().print(
                f"[dim]{len(rows) - max_rows} more rows; raise --max-rows or use -f csv[/]"
            )


@app.command()
def export(
    parquet: Annotated[
        Path,
        typer.Option(
            "--parquet", help="Folder to write one <table>.parquet per table into.", file_okay=False
        ),
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Replace Parquet files already in the folder.")
    ] = False,
    include_private: PrivateOpt = False,
    fmt: FormatOpt = Format.table,
    json_out: JsonFlag = False,
    refresh: RefreshOpt = True,
) -> None:
    """Write every analytics table as Parquet, for pandas, polars, the DuckDB CLI or Spark (your
    reading state only with --include-private, as every export)."""
    from kg.analytics import connect
    from kg.analytics.sql import PRIVATE_TABLES, export_parquet
    from kg.cli.output import console, emit_machine
    from kg.wording import counted

    fmt = pick_format(fmt, as_json=json_out)
    path = _database(refresh)
    con = connect(path, read_only=True)
    try:
        written = export_parquet(con, parquet, force=force, include_private=include_private)
    finally:
        con.close()
    left_out = [] if include_private else list(PRIVATE_TABLES)
    rows = [{"table": t, "rows": n, "file": str(parquet / f"{t}.parquet")} for t, n in written.items()]
    if not emit_machine(fmt, {"folder": str(parquet), "tables": written, "left_out": left_out}, rows,
                        ["table", "rows", "file"]):
        console().print(
            f"Wrote {counted(len(written), 'table')} ({counted(sum(written.values()), 'row', grouped=True)}) "
            f"as Parquet to {parquet}"
        )
        if left_out:
            console().print(f"[dim]Left out your reading state ({', '.join(left_out)}); "
                            "pass --include-private to write it too.[/]")
