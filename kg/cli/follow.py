"""``kg follow``, ``kg unfollow``, ``kg following``: the techniques you follow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt, pick_format

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kg.follows import Followed
    from kg.store.base import GraphStore

__all__ = ["register"]

TechniquesArg = Annotated[list[str], typer.Argument(help="Techniques by name, alias, id or IRI.")]


def _show(followed: Followed, fmt: Format, *, said: str | None = None) -> None:
    from kg.cli.output import console, emit, emit_json

    rows = [{"name": f.name, "id": f.id, "since": (f.since or "")[:10], "why": f.why or "", "technique": f.iri}
            for f in followed]
    if fmt is Format.json:
        emit_json({"inferred": followed.inferred, "said": said, "techniques": [f.as_dict() for f in followed]})
        return
    if fmt is Format.csv:
        emit([{**r, "inferred": followed.inferred} for r in rows], ["name", "id", "since", "why", "inferred",
                                                                    "technique"], fmt="csv")
        return
    out = console()
    if said:
        out.print(said)
    if followed.inferred:
        title = f"You follow {len(rows)} technique{'s' if len(rows) != 1 else ''}, inferred from your reading"
        emit(rows, ["name", "id", "why"], title=title)
        out.print("[dim]Inferred: you have not chosen yet. kg follow TECHNIQUE chooses (kg suggest reading and the "
                  "news then follow your choice).[/]")
    elif rows:
        emit(rows, ["name", "id", "since"], title=f"You follow {len(rows)} technique{'s' if len(rows) != 1 else ''}")
    else:
        out.print("You follow no technique (you unfollowed them all; kg unfollow --all goes back to inferring them "
                  "from your reading).")


def _keep_index(store: GraphStore, before: Mapping[str, object] | None) -> None:
    """The search index after a change to what you follow: the documents of the techniques
    followed before and after (a followed technique is your own in kg search --mine)."""
    from kg.cli.search import keep_index_current
    from kg.follows import chosen
    from kg.graphs import FOLLOWS

    keep_index_current(store, techniques=sorted({*(before or {}), *(chosen(store) or {})}), graphs=[FOLLOWS])


def follow(techniques: TechniquesArg, fmt: FormatOpt = Format.table) -> None:
    """Follow techniques: they drive kg suggest reading and the news. Until you follow any, what you follow is
    inferred from your reading list."""
    from kg.follows import chosen, followed
    from kg.follows import follow as do_follow
    from kg.resolve import resolve_technique

    fmt = pick_format(fmt)
    store = state().store()
    nodes = [resolve_technique(store, t) for t in techniques]
    before = chosen(store)
    new = do_follow(store, nodes)
    _keep_index(store, before)
    now = followed(store)
    names = {f.iri: f.name for f in now}
    said = (("Now following " + ", ".join(names.get(i, i) for i in new) + ".") if new
            else "You follow these already.")
    _show(now, fmt, said=said)


def unfollow(
    techniques: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045
        help="Techniques by name, alias, id or IRI.", show_default=False)] = None,
    everything: Annotated[bool, typer.Option(
        "--all", help="Forget your choice: what you follow is inferred from your reading again.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Stop following techniques. While what you follow is still inferred, the rest of the inferred list becomes
    your choice."""
    from kg.errors import KGError
    from kg.follows import chosen, followed, forget
    from kg.follows import unfollow as do_unfollow
    from kg.resolve import resolve_technique

    fmt = pick_format(fmt)
    store = state().store()
    before = chosen(store)
    if everything:
        if techniques:
            raise KGError("give techniques or --all, not both", hint="kg unfollow --all forgets every choice.")
        forgot = forget(store)
        _keep_index(store, before)
        said = ("Forgot your choice: what you follow is inferred from your reading again." if forgot
                else "You had not chosen: what you follow is inferred from your reading.")
        _show(followed(store), fmt, said=said)
        return
    if not techniques:
        raise KGError("name the techniques to unfollow", hint="Example: kg unfollow GDN; or kg unfollow --all.")
    nodes = [resolve_technique(store, t) for t in techniques]
    gone, was_inferred = do_unfollow(store, nodes)
    if gone:
        _keep_index(store, before)
    now = followed(store)
    if not gone:
        said = "You do not follow " + ", ".join(techniques) + "."
    else:
        said = f"No longer following {len(gone)} technique{'s' if len(gone) != 1 else ''}." + (
            " The rest of what was inferred is now your choice." if was_inferred else "")
    _show(now, fmt, said=said)


def following(fmt: FormatOpt = Format.table) -> None:
    """The techniques you follow, and whether you chose them or they are inferred from your reading (the
    techniques whose paper is on your reading list, and those the papers you read lately use)."""
    from kg.follows import followed

    fmt = pick_format(fmt)
    _show(followed(state().reader()), fmt)


def register(app: typer.Typer) -> None:
    for command in (follow, unfollow, following):
        app.command()(command)
