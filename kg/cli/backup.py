"""``kg backup``, ``kg restore`` and ``kg undo``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from kg.cli import state
from kg.cli.graph import FormatOpt, TableFormat, YesOpt, confirm

if TYPE_CHECKING:
    from kg.store.base import GraphStore

R = TypeVar("R")

__all__ = ["register"]


def backup(
    output: Annotated[Path, typer.Option("--output", "-o", help="The backup file, e.g. techkg-2026-05-01.nq.gz; "
                                         "'-' streams it to standard output (a pipe or a file).")],
    force: Annotated[bool, typer.Option("--force", help="Replace the file if it exists.")] = False,
    fmt: FormatOpt = TableFormat.table,
) -> None:
    """Write every named graph, with its provenance, to one gzipped N-Quads file (kg restore reads it)."""
    import sys

    from kg.backup import backup as write
    from kg.cli.output import console, emit, emit_json, err_console
    from kg.errors import KGError
    from kg.wording import counted

    state().json_errors = fmt is TableFormat.json
    if str(output) == "-":  # the gzipped bytes on stdout; what was written, on stderr
        if sys.stdout.isatty():
            raise KGError("kg backup -o - writes gzipped bytes to standard output, which is a terminal",
                          hint="Redirect it (kg backup -o - > techkg.nq.gz) or pipe it (| ssh host 'cat > b.nq.gz'); "
                               "or give a file name.")
        report = write(state().reader(), sys.stdout.buffer)
        err_console().print(f"Backed up {counted(len(report.graphs), 'graph')} "
                            f"({counted(report.triples, 'triple')}) to standard output", highlight=False)
        return
    report = write(state().reader(), output, force=force)
    if fmt is TableFormat.json:
        emit_json({"path": report.path, "graphs": report.graphs, "triples": report.triples})
    elif fmt is TableFormat.csv:
        emit([{"graph": g, "triples": n} for g, n in report.graphs.items()], ["graph", "triples"], fmt="csv")
    else:
        console().print(f"Backed up {counted(len(report.graphs), 'graph')} ({counted(report.triples, 'triple')}) "
                        f"to {report.path}")


def restore(
    file: Annotated[Path, typer.Argument(help="A file written by kg backup (or a snapshot).")],
    yes: YesOpt = False,
    unchecked: Annotated[bool, typer.Option(
        "--unchecked", help="Restore a backup written before kg backup added a checksum (its counts are "
        "still checked).")] = False,
    fmt: FormatOpt = TableFormat.table,
) -> None:
    """Make the store hold what a backup holds, once the whole file is checked against its
    checksum and counts. Into a store that is not empty: asks first, and keeps a snapshot of
    your own graphs (kg undo)."""
    from kg.backup import restore as run
    from kg.cli.output import console
    from kg.wording import counted

    state().json_errors = fmt is TableFormat.json
    report = _asking_once(lambda store, sure: run(store, file, yes=sure, unchecked=unchecked), yes=yes,
                          question=f"Restore {file} anyway?")
    data = {"path": report.path, "whole_store": report.whole, "graphs": report.graphs, "dropped": report.dropped,
            "snapshot": report.snapshot}
    if _emitted(fmt, data, report.graphs):
        return
    out = console()
    what = "the whole store" if report.whole else "the graphs it holds"
    out.print(f"Restored {what} from {report.path}: {counted(len(report.graphs), 'graph')}, "
              f"{counted(sum(report.graphs.values()), 'triple')}.")
    if report.dropped:
        out.print(f"Dropped graphs the backup does not hold: {', '.join(report.dropped)}")
    if report.snapshot:
        out.print(f"Your graphs as they were are kept in {report.snapshot}; kg undo puts them back.")


def undo(
    yes: YesOpt = False,
    fmt: FormatOpt = TableFormat.table,
) -> None:
    """Put your own graphs (reading state, reading list, sync state) back as they were before
    the last command that replaced or dropped one of them."""
    from kg.cli.output import console
    from kg.undo import describe_graphs
    from kg.undo import undo as run

    state().json_errors = fmt is TableFormat.json
    report = _asking_once(lambda store, sure: run(store, yes=sure), yes=yes,
                          question="Undo anyway and discard them?")
    snap = report.snapshot
    data = {"undid": snap.command, "at": snap.created, "restored": report.restored, "discarded": report.discarded,
            "changed": report.changed, "replaced_state_kept_in": str(report.kept_as) if report.kept_as else None}
    if _emitted(fmt, data, report.restored):
        return
    out = console()
    out.print(f"Undid {snap.describe()}: restored {describe_graphs(report.restored.items())}.")
    if not report.changed:
        out.print("(They were already as the snapshot has them.)")
    if report.discarded:
        out.print("Discarded later changes: " + "; ".join(report.discarded))
    if report.kept_as:
        out.print(f"The state it replaced is kept in {report.kept_as} (kg restore FILE puts it back).")


def register(app: typer.Typer) -> None:
    for command in (backup, restore, undo):
        app.command()(command)


def _asking_once(run: Callable[[GraphStore, bool], R], *, yes: bool, question: str) -> R:
    """``run(store, yes)`` on the open store; where it refuses for want of ``--yes``, ask
    ``question`` once (on a terminal) and run it again sure. The search index follows."""
    from kg.cli.search import keep_index_current
    from kg.errors import KGError

    store = state().store()
    try:
        report = run(store, yes)
    except KGError as error:
        if yes or "--yes" not in error.hint:
            raise
        confirm(f"{error.message}. {question}", yes=False)
        report = run(store, True)
    keep_index_current(store)
    return report


def _emitted(fmt: TableFormat, data: dict[str, Any], graphs: dict[str, int]) -> bool:
    """Print ``data`` as JSON, or the triples of each graph in ``graphs`` as CSV; False for a table."""
    from kg.cli.output import emit, emit_json

    if fmt is TableFormat.json:
        emit_json(data)
        return True
    if fmt is TableFormat.csv:
        emit([{"graph": g, "triples": n} for g, n in graphs.items()], ["graph", "triples"], fmt="csv")
        return True
    return False
