"""``kg reading note``: your notes on a paper (added to the ``kg reading`` group)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt, pick_format
from kg.cli.reading import app

if TYPE_CHECKING:
    from pyoxigraph import NamedNode

    from kg.notes import Note
    from kg.store.base import GraphStore

__all__ = ["note"]


def _pick(notes: list[Note], number: int | None, paper: str, *, verb: str) -> Note | None:
    """The note ``number`` (1 = newest) of a paper; its only note without a number."""
    from kg.errors import KGError

    if number is not None:
        if not 1 <= number <= len(notes):
            raise KGError(f"{paper!r} has {len(notes)} note{'s' if len(notes) != 1 else ''}, not a note {number}",
                          hint=f"kg reading note {paper!r} --show numbers them.")
        return notes[number - 1]
    if len(notes) > 1:
        raise KGError(f"{paper!r} has {len(notes)} notes: which one to {verb}?",
                      hint=f"Say which with --number N (kg reading note {paper!r} --show numbers them).")
    return notes[0] if notes else None


def _editor(initial: str) -> str:
    """The text after $VISUAL (or $EDITOR) edited ``initial`` in a temporary file."""
    import os
    import shlex
    import subprocess

    from kg import scratch
    from kg.errors import KGError

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise KGError("--edit opens your editor, and neither $EDITOR nor $VISUAL names one",
                      hint="Set EDITOR (export EDITOR=nano), or give the new text: "
                      "kg reading note PAPER 'TEXT' --edit.")
    with scratch.folder("kg-note-") as folder:
        path = folder / "note.txt"
        path.write_text(initial + ("\n" if initial else ""), encoding="utf-8")
        try:
            done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except OSError as exc:
            raise KGError(f"cannot start the editor {editor!r}: {exc.strerror or exc}",
                          hint="Set EDITOR to an editor on your PATH, e.g. nano or vi.") from None
        if done.returncode != 0:
            raise KGError(f"the editor {editor!r} exited with status {done.returncode}: nothing changed",
                          hint="Save and quit the editor normally to keep the note.")
        return path.read_text(encoding="utf-8").strip()


def _resolve(store: GraphStore, paper: str) -> NamedNode:
    from kg.reading import resolve_paper

    return resolve_paper(store, paper)


@app.command("note")
def note(
    paper: Annotated[str, typer.Argument(help="Title (or part of it), arXiv id or IRI of the paper.")],
    text: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        help="The note's text (a new note; with --edit, the note's new text).", show_default=False)] = None,
    edit: Annotated[bool, typer.Option(
        "--edit", help="Change a note: in $EDITOR, or to TEXT when given (a paper without a note gets one).")]
    = False,
    show: Annotated[bool, typer.Option("--show", help="Print the paper's notes, whole and numbered.")] = False,
    delete: Annotated[bool, typer.Option("--delete", help="Delete a note (asks first; kg undo brings it back).")]
    = False,
    number: Annotated[Optional[int], typer.Option(  # noqa: UP045
        "--number", "-n", min=1, help="Which note, as --show numbers them (1: the newest).", show_default=False)]
    = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Write a note on a paper, change one (--edit), print them (--show) or delete one (--delete). Notes are
    kept with your reading state, reach Zotero as child notes on the next sync, and kg undo takes a change back."""
    from kg.cli.output import console, emit, emit_json, emit_machine
    from kg.errors import KGError
    from kg.notes import add_note, delete_note, edit_note, notes_of

    fmt = pick_format(fmt)
    if sum((edit, show, delete)) > 1:
        raise KGError("give one of --edit, --show and --delete", hint="Each does one thing to a paper's notes.")
    if show or delete:
        if text is not None:
            raise KGError(f"--{'show' if show else 'delete'} takes no TEXT",
                          hint="Write a note with kg reading note PAPER 'TEXT'.")
    elif not edit and text is None:
        raise KGError("write the note's text, or say what to do with the paper's notes",
                      hint=f"kg reading note {paper!r} 'TEXT' adds one; --edit, --show and --delete do the rest.")
    store = state().reader() if show else state().store()
    node = _resolve(store, paper)
    title = paper
    if show:
        notes = notes_of(store, node)
        rows = [{"number": i, "note": n.text, "modified": (n.modified or "")[:16].replace("T", " "),
                 "from": n.source, "iri": n.iri} for i, n in enumerate(notes, start=1)]
        if fmt is Format.json:
            emit_json({"paper": node.value, "notes": [n.as_dict() for n in notes]})
        elif fmt is Format.csv:
            emit(rows, ["number", "note", "modified", "from", "iri"], fmt="csv")
        elif rows:
            emit(rows, ["number", "note", "modified", "from"], title=f"Notes on {node.value}: {len(rows)}",
                 lines=True)
        else:
            console().print(f"No notes on {node.value}.")
        return
    out = console()
    if delete:
        from kg.cli.graph import confirm

        chosen = _pick(notes_of(store, node), number, title, verb="delete")
        if chosen is None:
            raise KGError(f"{paper!r} has no note to delete", hint="kg reading note PAPER 'TEXT' writes one.")
        confirm(f"Delete the note “{chosen.text[:60]}{'…' if len(chosen.text) > 60 else ''}”?", yes=yes)
        gone = delete_note(store, node_of(chosen))
        _keep_index(store, node)
        record = {"action": "deleted", **gone.as_dict()}
        if not emit_machine(fmt, record):
            out.print("Deleted the note; kg undo brings it back (and the next kg sync zotero deletes it there).")
        return
    if edit:
        chosen = _pick(notes_of(store, node), number, title, verb="edit")
        new_text = text if text is not None else _editor(chosen.text if chosen else "")
        if not new_text:
            raise KGError("the note was left empty: nothing changed",
                          hint="To remove a note, use --delete.")
        if chosen is None:
            made = add_note(store, node, new_text, via="cli")
            record = {"action": "added", **made.as_dict()}
        else:
            made, changed = edit_note(store, node_of(chosen), new_text, via="cli")
            record = {"action": "edited" if changed else "unchanged", **made.as_dict()}
    else:
        assert text is not None
        made = add_note(store, node, text, via="cli")
        record = {"action": "added", **made.as_dict()}
    if record["action"] != "unchanged":
        _keep_index(store, node)
    if not emit_machine(fmt, record):
        said = {"added": "Added a note", "edited": "Changed the note", "unchanged": "The note already says that"}
        out.print(f"{said[str(record['action'])]} on {node.value}"
                  + ("; kg undo takes it back, and the next kg sync zotero sends it." if record["action"] != "unchanged"
                     else "."))


def _keep_index(store: GraphStore, paper: NamedNode) -> None:
    """The search index after a note changed: the paper's document again (a note is its text)."""
    from kg.cli.search import keep_index_current
    from kg.graphs import READING

    keep_index_current(store, papers=[paper.value], graphs=[READING])


def node_of(chosen: Note) -> NamedNode:
    from pyoxigraph import NamedNode

    return NamedNode(chosen.iri)
