"""The ``kg`` command: the one place that wires sources, the store and consumers together.

Command modules import only typer at module level; everything heavy (the store,
rdflib, pyshacl, duckdb, torch) is imported inside the command that needs it, so
``kg --help`` stays fast.

What belongs here: the commands, their options and what they print (:mod:`kg.cli.output`).
What does not: the work a command does, which lives in the core, a source or a consumer
and is called from here. Nothing imports ``kg.cli``: it is the top of the layers.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer._click.exceptions import UsageError
from typer.core import TyperGroup

if TYPE_CHECKING:
    from typer._click import Command  # typer 0.29 carries its own click

    from kg.store.base import GraphStore

__all__ = ["State", "app", "main", "state"]


@dataclass
class State:
    """Options shared by every command."""

    store_spec: str | None = None
    wait: float = 10.0
    _store: GraphStore | None = field(default=None, repr=False)
    _reader: GraphStore | None = field(default=None, repr=False)
    _watch: Any = field(default=None, repr=False)

    @property
    def json_errors(self) -> bool:
        """Whether an error that ends the command is printed as JSON (the command prints JSON)."""
        from kg.cli.output import ERRORS

        return ERRORS.as_json

    @json_errors.setter
    def json_errors(self, value: bool) -> None:
        from kg.cli.output import ERRORS

        ERRORS.as_json = value

    def store(self) -> GraphStore:
        """The store, opened for writing on first use (waiting up to ``--wait`` seconds
        for another writer); it is closed when the command ends."""
        if self._store is None:
            from kg.store import open_store

            self._store = open_store(self.store_spec, wait=self.wait, command=_command(), notice=notice)
            self._watch = _watch(self._store)
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

    def keep_derived(self) -> None:
        """Bring derived data up to date with what the command wrote so far (kg.derived),
        now rather than as the command ends."""
        if self._watch is not None:
            watch, self._watch = self._watch, None
            from kg.cli.output import note

            watch.finish(note)

    def close(self) -> None:
        self.close_reader()
        self.keep_derived()  # derived data brought up to date with what the command wrote
        if self._store is not None:
            self._store.close()
            self._store = None


def _watch(store: GraphStore) -> Any:
    """Watch the writer for the keepers of derived data (:mod:`kg.derived`): the analytics
    tables, when they are fresh now, and the search index are kept so by the command's writes."""
    from kg import derived
    from kg.analytics.keeper import TablesKeeper
    from kg.search.keeper import IndexKeeper

    derived.register(TablesKeeper())
    derived.register(IndexKeeper())
    return derived.watch(store)


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
        from kg.version import __version__

        typer.echo(f"kg (TechKG) {__version__}, Python {sys.version.split()[0]}")
        raise typer.Exit()


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


#: The command groups (``kg NAME ...``), each the ``app`` of its module, loaded only when used
#: (with the modules that add commands to it: kg.cli.sync adds kg ingest zotero).
_GROUPS = {
    "import": "kg.cli.importing",
    "reading": "kg.cli.reading kg.cli.notes",  # kg reading note (#29)
    "ingest": "kg.cli.ingest kg.cli.sync",
    "sync": "kg.cli.sync",  # kg sync zotero, kg ingest zotero (#4)
    "export": "kg.cli.export",
    "analytics": "kg.cli.analytics",
    "kernels": "kg.cli.kernels",  # kg kernels (#8)
    "graph": "kg.cli.graph",  # kg graph list/drop (#13)
    "suggest": "kg.cli.suggest",  # kg suggest (#17)
    "technique": "kg.cli.technique",  # kg technique add/edit/remove/list/export/import (#29)
    "links": "kg.cli.links",  # kg links list/accept/reject/add/threshold (#28)
}
#: The modules whose ``register(app)`` adds plain commands, and the commands each adds,
#: loaded only when one of them is used (a test checks the names against the modules).
_COMMANDS = {
    "kg.cli.backup": ("backup", "restore", "undo"),  # (#13)
    "kg.cli.query": ("query",),  # kg query, kg serve (issue #5)
    "kg.cli.serve": ("serve",),
    "kg.cli.search": ("search",),  # kg search (#33)
    "kg.cli.news": ("news",),  # kg news (#33)
    "kg.cli.refresh": ("refresh",),  # kg refresh (#33)
    "kg.cli.follow": ("follow", "unfollow", "following"),  # (#29)
    "kg.cli.links": ("link",),  # kg link (#28)
}
#: The order ``kg --help`` lists them in, after the commands of kg.cli.core.
_ORDER = (*(name for names in _COMMANDS.values() for name in names), *_GROUPS)


class _LazyGroup(TyperGroup):
    """The ``kg`` group: a command group or a command of another module is imported and
    made (typer's reading of its parameters) only when it is run or listed, so that
    ``kg suggest lineage`` pays for kg.cli.suggest alone and ``kg --help`` stays fast."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _prepare(self)

    def list_commands(self, ctx: Any) -> list[str]:
        eager = super().list_commands(ctx)
        return [*eager, *(name for name in _ORDER if name not in eager)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        import typer.main

        if cmd_name in _GROUPS:
            first, *more = _GROUPS[cmd_name].split()
            for name in more:
                importlib.import_module(name)
            group = typer.main.get_group(importlib.import_module(first).app)
            group.name = cmd_name
            _prepare(group)
            self.add_command(group, cmd_name)
            return group
        module = next((m for m, names in _COMMANDS.items() if cmd_name in names), None)
        if module is None:
            return None
        scratch = typer.Typer()
        importlib.import_module(module).register(scratch)
        for name, command in typer.main.get_group(scratch).commands.items():
            _prepare(command)
            self.add_command(command, name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return self._click_resolve_command(ctx, args)
        except UsageError as error:  # typer's "Did you mean ...", over every command, loaded or not
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches:
                error.message = error.message.rstrip(".") + ". Did you mean " + ", ".join(map(repr, matches)) + "?"
            raise


app = typer.Typer(
    name="kg",
    cls=_LazyGroup,
    help="TechKG: a knowledge graph and literature tracker for ML training techniques.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.callback()(_main)
# kg build, stats, show, lineage, ...: the commands most runs use, made with the group.
importlib.import_module("kg.cli.core").register(app)


def _prepare(command: Command) -> None:
    """Make every command's ``--help`` read well at any width (typer 0.29), and its plain
    option values read without pydantic (:mod:`kg.cli.coercion`):

    - join the line breaks inside each paragraph, so that the terminal folds the prose at
      its own width (typer keeps a docstring's breaks after the first paragraph, which
      leaves one-word lines at 80 columns); a paragraph that starts with click's ``\\b``
      keeps its lines;
    - show no type for an on/off flag (typer writes ``<bool>`` beside ``--help``), and a
      repeatable option as ``<str>...`` rather than ``<list[str]>``.
    """
    from typer.core import TyperOption

    from kg.cli.coercion import install

    if command.help:
        paragraphs = inspect.cleandoc(command.help).split("\n\n")
        command.help = "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)
    made_help_option = command.get_help_option

    def help_option(ctx: Any) -> Any:  # made by click when help is shown
        option = made_help_option(ctx)
        if option is not None:
            option.metavar = ""
            install(option)
        return option

    command.get_help_option = help_option  # type: ignore[method-assign]  # one command's, not the class's
    for param in command.params:
        install(param)
        if not isinstance(param, TyperOption) or param.metavar is not None:
            continue
        if param.is_flag:
            param.metavar = ""
        elif param.multiple:
            shown = param.display_type_rich(typer.Context(command))
            if shown and shown.startswith("<list[") and shown.endswith("]>"):
                param.metavar = "<" + shown[len("<list["):-len("]>")] + ">..."
    for sub in getattr(command, "commands", {}).values():
        _prepare(sub)


def main() -> None:
    """Entry point of the ``kg`` console script."""
    import typer.main

    from kg.errors import KGError

    command = typer.main.get_command(app)  # made ready by _LazyGroup
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
