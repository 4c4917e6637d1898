"""The ``kg`` command: the one place that wires sources, the store and consumers together.

Command modules import only typer at module level; everything heavy (the store,
rdflib, pyshacl, duckdb, torch) is imported inside the command that needs it, so
``kg --help`` stays fast.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from typer._click import Command  # typer 0.29 carries its own click

    from kg.store.base import GraphStore

__all__ = ["State", "app", "main", "state"]

app = typer.Typer(
    name="kg",
    help="TechKG: a knowledge graph and literature tracker for ML training techniques.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@dataclass
class State:
    """Options shared by every command."""

    store_spec: str | None = None
    json_errors: bool = False
    wait: float = 10.0
    _store: GraphStore | None = field(default=None, repr=False)
    _reader: GraphStore | None = field(default=None, repr=False)

    def store(self) -> GraphStore:
        """The store, opened for writing on first use (waiting up to ``--wait`` seconds
        for another writer); it is closed when the command ends."""
        if self._store is None:
            from kg.store import open_store

            self._store = open_store(self.store_spec, wait=self.wait, command=_command(), notice=notice)
        return self._store

    def reader(self) -> GraphStore:
        """The store for a command that only reads: never waits for a writer. Within a
        command that also writes, the writer it opened."""
        if self._store is not None:
            return self._store
        if self._reader is None:
            from kg.store import open_store, store_spec

            spec = store_spec(self.store_spec)
            if spec == ":memory:" or spec.startswith(("http://", "https://")):
                return self.store()
            self._reader = open_store(self.store_spec, mode="read", notice=notice)
        return self._reader

    def close_reader(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def close(self) -> None:
        self.close_reader()
        if self._store is not None:
            self._store.close()
            self._store = None


def notice(message: str) -> None:
    """Print a one-line message about the store (waiting, recovering) to stderr."""
    from kg.cli.output import err_console

    err_console().print(f"[yellow]{message}[/]", highlight=False)


def _command() -> str:
    """``kg import rdf``: the command path only (never its arguments, which may hold secrets)."""
    # The click that typer runs on (its own copy in recent typer): the package of its Context's base.
    base = next(c for c in typer.Context.__mro__ if c.__name__ == "Context" and c.__module__.endswith(".core"))
    package = base.__module__.rsplit(".", 1)[0]
    ctx = importlib.import_module(package + ".globals").get_current_context(silent=True)
    return str(ctx.command_path) if ctx is not None else "kg"


_STATE = State()


def state() -> State:
    return _STATE


def _version(value: bool) -> None:
    if value:
        from kg import __version__

        typer.echo(f"kg (TechKG) {__version__}, Python {sys.version.split()[0]}")
        raise typer.Exit()


@app.callback()
def _main(
    ctx: typer.Context,
    store: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional here
        typer.Option(
            "--store",
            envvar="KG_STORE",
            help="Store: a directory (embedded Oxigraph), ':memory:', or a SPARQL endpoint URL "
            "(query URL; add ';update=URL' and ';gsp=URL' if they differ). "
            "Default: ~/.local/share/techkg/store.",
            show_default=False,
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    wait: Annotated[
        float,
        typer.Option("--wait", envvar="KG_WAIT", min=0,
                     help="Seconds a command that writes waits for another writer to finish."),
    ] = 10.0,
) -> None:
    _STATE.store_spec = store
    _STATE.wait = wait
    ctx.call_on_close(_STATE.close)


def _register() -> None:
    # One line per command group; each module keeps its heavy imports inside its commands.
    from kg.cli import core, importing, ingest, reading

    core.register(app)
    app.add_typer(importing.app, name="import")
    app.add_typer(reading.app, name="reading")
    app.add_typer(ingest.app, name="ingest")
    app.add_typer(importlib.import_module("kg.cli.sync").app, name="sync")  # kg sync zotero, kg ingest zotero (#4)
    app.add_typer(importlib.import_module("kg.cli.export").app, name="export")
    app.add_typer(importlib.import_module("kg.cli.analytics").app, name="analytics")
    app.add_typer(importlib.import_module("kg.cli.kernels").app, name="kernels")  # kg kernels (#8)
    app.add_typer(importlib.import_module("kg.cli.graph").app, name="graph")  # kg graph list/drop (#13)
    importlib.import_module("kg.cli.backup").register(app)  # kg backup, restore, undo (#13)
    app.add_typer(importlib.import_module("kg.cli.suggest").app, name="suggest")  # kg suggest (#17)
    for name in ("query", "serve"):  # kg query, kg serve (issue #5)
        importlib.import_module(f"kg.cli.{name}").register(app)


_register()


def _tidy_help(command: Command) -> None:
    """Make every command's ``--help`` read well at any width (typer 0.29):

    - join the line breaks inside each paragraph, so that the terminal folds the prose at
      its own width (typer keeps a docstring's breaks after the first paragraph, which
      leaves one-word lines at 80 columns); a paragraph that starts with click's ``\\b``
      keeps its lines;
    - show no type for an on/off flag (typer writes ``<bool>`` beside ``--help``), and a
      repeatable option as ``<str>...`` rather than ``<list[str]>``.
    """
    from typer.core import TyperOption

    if command.help:
        paragraphs = inspect.cleandoc(command.help).split("\n\n")
        command.help = "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)
    made_help_option = command.get_help_option

    def help_option(ctx: Any) -> Any:  # made by click when help is shown
        option = made_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = help_option  # type: ignore[method-assign]  # one command's, not the class's
    for param in command.params:
        if not isinstance(param, TyperOption) or param.metavar is not None:
            continue
        if param.is_flag:
            param.metavar = ""
        elif param.multiple:
            shown = param.display_type_rich(typer.Context(command))
            if shown and shown.startswith("<list[") and shown.endswith("]>"):
                param.metavar = "<" + shown[len("<list["):-len("]>")] + ">..."
    for sub in getattr(command, "commands", {}).values():
        _tidy_help(sub)


def main() -> None:
    """Entry point of the ``kg`` console script."""
    import typer.main

    from kg.errors import KGError

    command = typer.main.get_command(app)
    _tidy_help(command)
    try:
        command(prog_name="kg")
    except KGError as error:
        from kg.cli.output import print_error

        print_error(error, as_json=_STATE.json_errors)
        _STATE.close()
        sys.exit(1)
    except KeyboardInterrupt:
        _STATE.close()
        sys.exit(130)
