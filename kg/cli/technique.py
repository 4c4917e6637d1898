"""``kg technique``: techniques of your own, and your facts on the catalog's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt, pick_format

if TYPE_CHECKING:
    from kg.owntech import Change, Outcome

__all__ = ["app"]

app = typer.Typer(help="Add techniques of your own, give your facts on the catalog's, list, export and import them.",
                  no_args_is_help=True)

AliasOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--alias", "-a", help="Another name it goes by (repeat for more).", show_default=False)]
CategoryOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--category", "-c", help="An existing category, by id or label (kg technique list shows them).",
    show_default=False)]
NewCategoryOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--new-category", help="Make a category of your own with this label and put it there.", show_default=False)]
PaperOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--paper", "-p", help="Its primary paper: an arXiv id, a DOI or words of a title the graph holds. A paper the "
    "graph lacks is added, and kg ingest arxiv (or citations) fills in its metadata.", show_default=False)]
RepoOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--repo", help="Its code: GitHub owner/name or a repository URL.", show_default=False)]
DateOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--date", help="When it appeared: YYYY, YYYY-MM or YYYY-MM-DD.", show_default=False)]
SummaryOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--summary", help="One or two sentences: what it is.", show_default=False)]
ParentOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--parent", help="TECHNIQUE:RELATION, e.g. GPipe:extends (repeat for more); relations as in the catalog's "
    "lineage: refines, generalizes, specializes, replaces, combines, extends, inverts, reimplements, portsTo, "
    "buildsOn, implements, derivesFrom.", show_default=False)]
SetOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--set", help="DIMENSION=TEXT for a dimension of the comparison page (core_mechanism, token_mixing, "
    "kv_state_layout, selector_compressor, situation, target, action, result, suits, compute_memory, "
    "parallel_dimension, limitations, availability) or headline; repeat for more. An empty TEXT clears yours.",
    show_default=False)]
ForceOpt = Annotated[bool, typer.Option(
    "--force", help="Give a name or alias even though another technique already answers to it.")]


def _change(*, name: str | None = None, ident: str | None = None, alias: list[str] | None = None,
            drop_alias: list[str] | None = None, category: str | None = None, new_category: str | None = None,
            summary: str | None = None, paper: str | None = None, repo: str | None = None, date: str | None = None,
            parent: list[str] | None = None, drop_parent: list[str] | None = None, sets: list[str] | None = None,
            force: bool = False) -> Change:
    from kg.owntech import Change
    from kg.owntech.checks import parse_setting

    values = dict(parse_setting(s) for s in sets or [])
    if summary is not None:
        values["summary"] = summary
    return Change(name=name, ident=ident, aliases=list(alias or []), drop_aliases=list(drop_alias or []),
                  category=category, new_category=new_category, date=date, paper=paper, repository=repo,
                  parents=list(parent or []), drop_parents=list(drop_parent or []), values=values, force=force)


def _keep_index(techniques: list[str]) -> None:
    """The search index after a change to your techniques: those documents again, and the
    graphs that changed (my-techniques, follows) followed to the papers they name."""
    from kg.cli.search import keep_index_current

    keep_index_current(state().store(), techniques=techniques)


def _say(outcome: Outcome, fmt: Format) -> None:
    from rich.markup import escape

    from kg.cli.output import console, emit_machine
    from kg.owntech.edit import read_mine
    from kg.owntech.known import read_known

    entry = outcome.entry
    if outcome.action != "unchanged":
        _keep_index([entry.iri.value])
    store = state().reader()
    names = read_known(store).names(read_mine(store))
    parents = [f"{names.get(p, (p, p))[0]} ({r})" for p, r in entry.parents]
    record: dict[str, Any] = {"action": outcome.action, "technique": entry.iri.value, "id": entry.id, "own": entry.own,
              "name": entry.name or names.get(entry.iri.value, (entry.id, ""))[0], "category": entry.category,
              "aliases": entry.aliases, "date": entry.date, "paper": entry.paper, "repository": entry.repository,
              "parents": parents,
              "values": entry.values, "notes": outcome.notes}
    flat = {**record, "aliases": "; ".join(entry.aliases), "parents": "; ".join(parents),
            "values": "; ".join(f"{k}={v}" for k, v in entry.values.items()), "notes": "; ".join(outcome.notes)}
    if emit_machine(fmt, record, [flat], list(flat)):
        return
    out = console()
    whose = "your technique" if entry.own else "your facts on the catalog's"
    verb = {"added": "Added", "changed": "Changed", "unchanged": "Nothing to change in",
            "removed": "Removed"}[outcome.action]
    out.print(f"{verb} {whose} [bold]{escape(str(record['name']))}[/] ({entry.id}).")
    if outcome.action != "removed":
        facts = entry.facts()
        if facts:
            out.print("  yours: " + escape(", ".join(facts)))
    for note in outcome.notes:
        out.print(f"  [dim]{escape(note)}[/]")
    if outcome.action == "removed":
        out.print("  kg undo brings it back.")
    elif outcome.action != "unchanged":
        out.print(f"  kg show {entry.id} shows it; kg undo takes this back.")


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="The technique's name, e.g. 'PipeDream-2BW'.")],
    ident: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--id", help="Its id (a lowercase slug); default: made from the name.", show_default=False)] = None,
    alias: AliasOpt = None,
    category: CategoryOpt = None,
    new_category: NewCategoryOpt = None,
    summary: SummaryOpt = None,
    paper: PaperOpt = None,
    repo: RepoOpt = None,
    date: DateOpt = None,
    parent: ParentOpt = None,
    sets: SetOpt = None,
    force: ForceOpt = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Add a technique of your own: it appears in kg show, compare, lineage, the exports, analytics and the web
    like the catalog's, marked as yours. It lives in your my-techniques graph, which kg build never replaces."""
    from kg.owntech import add_technique

    fmt = pick_format(fmt)
    change = _change(name=name, ident=ident, alias=alias, category=category, new_category=new_category,
                     summary=summary, paper=paper, repo=repo, date=date, parent=parent, sets=sets, force=force)
    _say(add_technique(state().store(), change), fmt)


@app.command("edit")
def edit(
    technique: Annotated[str, typer.Argument(help="Your technique, or a catalog one (name, alias, id or IRI).")],
    name: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--name", help="A new name (your own techniques only).", show_default=False)] = None,
    alias: AliasOpt = None,
    drop_alias: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--drop-alias", help="Take back an alias you gave.", show_default=False)] = None,
    category: CategoryOpt = None,
    new_category: NewCategoryOpt = None,
    summary: SummaryOpt = None,
    paper: PaperOpt = None,
    repo: RepoOpt = None,
    date: DateOpt = None,
    parent: ParentOpt = None,
    drop_parent: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--drop-parent", help="Take back a parent you gave (by its name).", show_default=False)] = None,
    sets: SetOpt = None,
    force: ForceOpt = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Change your technique, or give your own facts on a catalog technique: an extra alias, a corrected date, a
    new parent, a dimension's text. Where the catalog has one value (a date, a dimension), yours replaces it in
    every view; kg provenance shows both. An empty value (--date '') takes yours back."""
    from kg.owntech import edit_technique

    fmt = pick_format(fmt)
    change = _change(name=name, alias=alias, drop_alias=drop_alias, category=category, new_category=new_category,
                     summary=summary, paper=paper, repo=repo, date=date, parent=parent, drop_parent=drop_parent,
                     sets=sets, force=force)
    _say(edit_technique(state().store(), technique, change), fmt)


@app.command("remove")
def remove(
    technique: Annotated[str, typer.Argument(help="Your technique (or a catalog one, to take back your facts on it).")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Remove a technique of your own (with the edges you gave to it, and your follow), or your facts on a catalog
    technique. It asks first; kg undo brings it back."""
    from kg.cli.graph import confirm
    from kg.owntech import remove_technique
    from kg.owntech.edit import context, remove_entry

    fmt = pick_format(fmt)
    store = state().store()
    known, mine = context(store)
    preview = remove_entry(known, mine.copy(), technique)  # refuses an unknown name before asking
    entry = preview.entry
    what = (f"your technique {entry.name} ({entry.id})" if entry.own else
            f"your facts on {known.names(mine)[entry.iri.value][0]} ({', '.join(entry.facts()) or 'none'})")
    confirm(f"Remove {what}?", yes=yes)
    _say(remove_technique(store, technique), fmt)


@app.command("list")
def list_(
    mine: Annotated[bool, typer.Option("--mine", help="Only yours: your techniques and the catalog's you gave "
                                                      "facts on.")] = False,
    category: CategoryOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Every technique with its category, date and lineage parents; which are yours, and what you gave."""
    import kg.answer
    from kg.cli.output import emit
    from kg.owntech.edit import read_mine
    from kg.owntech.known import category_id, read_known
    from kg.views import lineage_edges

    fmt = pick_format(fmt)
    store = state().reader()
    my = read_mine(store)
    wanted = category_id(read_known(store), my, category) if category else None
    parents: dict[str, list[str]] = {}
    for e in lineage_edges(store):
        parents.setdefault(e.child, []).append(f"{e.parent_name} ({e.relation})")
    rows: list[dict[str, Any]] = []
    for r in kg.answer.records(store, "lineage-nodes"):
        entry = my.entries.get(r["id"])
        yours = "added" if r["addedBy"] else (("amended: " + ", ".join(entry.facts())) if entry else "")
        if (mine and not yours) or (wanted and r["categoryId"] != wanted):
            continue
        rows.append({"id": r["id"], "name": r["name"], "category": r["categoryLabel"],
                     "date": str(r["date"]) if r["date"] is not None else "", "yours": yours,
                     "parents": "; ".join(sorted(parents.get(r["technique"], []))), "technique": r["technique"]})
    columns = ["id", "name", "category", "date", "yours", "parents"] + ([] if fmt is Format.table else ["technique"])
    title = f"{'Your techniques' if mine else 'Techniques'}: {len(rows)}"
    emit(rows, columns, fmt=fmt.value, title=title)


@app.command("export")
def export(
    output: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--output", "-o", help="The TOML file to write (default: print it).", show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the file if it exists.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Your techniques, your categories and your facts on catalog techniques as one TOML file in the catalog's
    schema (docs/catalog-format.md): keep it in git, share it, load it with kg technique import. Without -o, the
    TOML is printed (-f json: the same entries as JSON; -f csv: one row per technique); with -o, -f is the
    report's format."""
    import sys
    import tomllib

    from kg.cli.output import emit, emit_machine
    from kg.errors import ExportError
    from kg.owntech.tomlfile import export_text

    fmt = pick_format(fmt)
    text, count = export_text(state().reader())
    if output is None:
        if fmt is Format.table:
            sys.stdout.write(text)
            return
        data = tomllib.loads(text)
        if fmt is Format.json:
            from kg.cli.output import emit_json

            emit_json(data)
            return
        rows = [{"id": t["id"], "name": t.get("name", ""), "category": t.get("category", ""),
                 "yours": "added" if "name" in t else "facts on the catalog's", "date": t.get("date", "")}
                for t in data.get("technique", [])]
        emit(rows, ["id", "name", "category", "yours", "date"], fmt="csv")
        return
    if output.exists() and not force:
        raise ExportError(f"{output} exists", hint="Pass --force to replace it, or choose another file name.")
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot write {output}: {exc.strerror or exc}") from None
    record = {"path": str(output), "techniques": count}
    if not emit_machine(fmt, record):
        print(f"Wrote {count} technique{'s' if count != 1 else ''} to {output}", file=sys.stderr)


@app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(help="A TOML file of techniques (as kg technique export writes it).")],
    force: ForceOpt = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check it and say what it would do; write nothing.")]
    = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Load techniques from a TOML file: each technique it names becomes what it says (checked as kg technique add
    checks it); the others are left alone. Importing the same file again changes nothing."""
    from kg.cli.output import console, emit
    from kg.owntech.tomlfile import import_file

    fmt = pick_format(fmt)
    report = import_file(state().store(), path, force=force, dry_run=dry_run)
    if report.written:
        _keep_index([])
    rows = [{"technique": t, "action": a} for t, a in report.techniques.items()]
    if fmt is Format.json:
        from kg.cli.output import emit_json

        emit_json({"path": report.path, "dry_run": dry_run, "written": report.written,
                   "added": report.count("added"), "changed": report.count("changed"),
                   "left_alone": report.count("left alone"), "categories_added": report.categories,
                   "techniques": report.techniques, "notes": report.notes})
        return
    if fmt is Format.csv:
        emit(rows, ["technique", "action"], fmt="csv")
        return
    emit(rows, ["technique", "action"], title=f"{'Would import' if dry_run else 'Imported'} {path.name}")
    out = console()
    out.print(f"{report.count('added')} added, {report.count('changed')} changed, "
              f"{report.count('left alone')} left alone"
              + (f"; new categories: {', '.join(report.categories)}" if report.categories else "")
              + (" (nothing written: --dry-run)" if dry_run else ""))
    for note in report.notes:
        out.print(f"[dim]{note}[/]")
