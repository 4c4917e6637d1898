"""Top-level commands: build, stats, show, lineage, compare, sparql, validate, provenance."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, FormatOpt, pick_format

__all__ = ["register"]


class LineageFormat(StrEnum):
    tree = "tree"
    table = "table"
    json = "json"
    csv = "csv"


class CompareFormat(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"
    csv = "csv"


class SparqlFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    tsv = "tsv"
    xml = "xml"
    turtle = "turtle"
    ntriples = "ntriples"
    jsonld = "jsonld"


class Direction(StrEnum):
    up = "up"
    down = "down"
    both = "both"


def build(
    data: Annotated[Optional[Path], typer.Option(help="Catalog directory (default: the packaged kg/data).")] = None,  # noqa: UP045
    reading_list: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--reading-list", "-r",
                     help="Make this markdown file your reading list, replacing the current one (a snapshot "
                     "is kept: kg undo). Without it, the bundled list seeds a store that has none."),
    ] = None,
    validate: Annotated[bool, typer.Option(help="Run SHACL validation after loading.")] = True,
    accept_counts: Annotated[bool, typer.Option(
        "--accept-counts", help="Import a reading list whose tables disagree with its header's counts.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Build even if no input changed since the last one.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Load the catalog (and your reading list, if none is there yet or with -r) into the store,
    validate it and print a summary. With nothing changed since the last build, it does nothing."""
    from kernels import registry
    from kg.build import build as run_build
    from kg.build import build_inputs, up_to_date
    from kg.cli.output import console, emit_machine
    from kg.validate import cache_for, validate_store

    fmt = pick_format(fmt)
    extra = [Path(registry.__file__)]  # the kernel registry is recorded too (below)
    reader = state().reader()
    writes = force or not up_to_date(reader, build_inputs(data, reading_list, extra=extra))
    if writes:
        state().close_reader()
        store = state().store()
    else:
        store = reader  # nothing to write: a reader answers, and no writer waits for us
    from kernels.record import record_registry

    # Which techniques have a kernel and which have none (reasoned), for every view of the
    # graph, in the build's own transaction; runs are added by kg kernels verify.
    from kg.cli.links import relinking
    from kg.cli.search import index_after_build
    from kg.graphs import CATALOG, READING_LIST

    with relinking([CATALOG, READING_LIST], label="kg build (links)", names=True, enabled=writes) as linked:
        report = run_build(store, data=data, reading_list=reading_list, validate=False,
                           accept_counts=accept_counts, force=force, extra_inputs=extra,
                           also=lambda tx: record_registry(store, tx))
    if writes:
        report.triples = store.count()  # the links made after the build's own write included
    index_after_build(store, force=force, fmt=fmt, linked=linked)  # after the links: the index reads them too
    if validate:
        report.violations = validate_store(store, cache=cache_for(store))
    r, imported = report.reading, report.imported
    summary = {
        "store": store.location,
        "up_to_date": report.up_to_date,
        "techniques": report.techniques,
        "lineage_only_parents": report.lineage_only_parents,
        "categories": report.categories,
        "papers": report.papers,
        "catalog_papers": report.catalog_papers,
        "lineage_edges": report.lineage_edges,
        "reading_list": {"source": _source_name(r.source), "entries": r.entries, "read": r.read,
                         "to_read": r.to_read, "with_note": r.with_note, "categories": r.categories,
                         "listed": r.listed, "added": r.added},
        "imported": None if imported is None else {
            "path": imported.path, "entries": imported.entries, "stated_counts": imported.stated_counts,
            "counts_match": imported.counts_match, "status_changes": imported.status_changes,
            "removed": imported.removed, "unmatched": imported.unmatched,
            "linked_techniques": imported.linked_techniques},
        "changed_graphs": report.changed,
        "unchanged_graphs": report.unchanged,
        "triples": report.triples,
        "violations": [str(v) for v in report.violations],
    }
    if not emit_machine(fmt, summary):
        out = console()
        out.print(f"[bold]Built the graph[/] in {store.location}" if not report.up_to_date else
                  f"[bold]Up to date[/]: no input changed since the last build of {store.location}")
        more = report.papers - report.catalog_papers
        source = _source_name(r.source)
        where = f"{r.listed} from {source or 'your list'}, {r.added} added one by one" if r.added else source
        lines = [
            ("techniques", f"{report.techniques} on the comparison page (+{report.lineage_only_parents} "
                           f"lineage-only parents) in {report.categories} categories"),
            ("lineage edges", str(report.lineage_edges)),
            ("papers", f"{report.papers}" + (
                f": {report.catalog_papers} of the catalog's bibliography, {more} from your list and sources"
                if more else " (the catalog's bibliography)")),
            ("reading list", f"{r.entries} papers: {r.read} read, {r.to_read} to read, {r.with_note} with a note, "
                             f"{r.categories} categories" + (f" ({where})" if where else "")),
        ]
        _print_lines(out, lines)
        if imported is not None:
            _print_import(imported, out, indent="  ")
        lines = [("graphs written", ", ".join(report.changed) or "none (everything was up to date)")] \
            if not report.up_to_date else []
        _print_lines(out, [*lines, ("triples", str(report.triples))])
        if validate:
            _print_violations(report.violations, out)
    if report.violations:
        raise _validation_error(report.violations)


def _print_lines(out: Any, lines: list[tuple[str, str]]) -> None:
    """Summary lines ``  label  value``: a value too long for the terminal folds under itself."""
    import textwrap

    for label, value in lines:
        out.print(textwrap.fill(value, width=out.width, initial_indent=f"  {label:<14}  ", subsequent_indent=" " * 18,
                                break_long_words=False, break_on_hyphens=False), markup=False, highlight=False)


def _source_name(source: str | None) -> str | None:
    """The reading list's file as a person names it: ``reading-list.md``."""
    if not source:
        return None
    from kg.sources import source_label

    return Path(source_label(source)).name


def _print_import(report: Any, out: Any, *, indent: str = "") -> None:
    """What importing a reading list changed (shared by kg build -r and kg import reading-list)."""
    from rich.markup import escape

    if report.stated_counts and not report.counts_match:
        total, read, to_read = report.stated_counts
        out.print(f"{indent}[yellow]imported although the file's header says {total} entries, {read} read, "
                  f"{to_read} to read (--accept-counts)[/]")
    if report.removed:
        shown = "; ".join(escape(t) for t in report.removed[:5]) + (" ..." if len(report.removed) > 5 else "")
        out.print(f"{indent}{len(report.removed)} entries left the list (and the reading state): {shown}")
    if report.unmatched:
        out.print(f"{indent}[yellow]{len(report.unmatched)} entries matched no known paper[/] (kept as new papers): "
                  + "; ".join(escape(t) for t in report.unmatched[:5]))


def _print_violations(violations: list[Any], out: Any) -> None:
    from rich.markup import escape

    if not violations:
        out.print("  [green]✓[/] SHACL validation passed")
        return
    for v in violations[:20]:
        where = f" [dim](in {', '.join(v.graphs)})[/]" if v.graphs else ""
        out.print(f"  [red]✗[/] {escape(str(v))}{where}")


def _validation_error(violations: list[Any]) -> Exception:
    """The error for violations, with a hint that names what to fix: the catalog files for
    facts of the package's graphs, the import for imported facts, the user's own commands
    for their own graphs."""
    from kg.errors import ValidationError
    from kg.graphs import SOURCES, GraphKind, graph_iri, graph_kind

    graphs = sorted({g for v in violations for g in v.graphs})
    kinds = {g: graph_kind(graph_iri(g)) if g in SOURCES or g.startswith("import/") else None for g in graphs}
    hints = []
    if any(k is GraphKind.package for k in kinds.values()):
        hints.append("fix the catalog files named in the messages and run kg build again")
    imports = [g for g, k in kinds.items() if g.startswith("import/")]
    if imports:
        hints.append(f"fix or drop the imported graphs ({', '.join(imports)}): kg graph drop NAME")
    if any(k is GraphKind.user for k in kinds.values()):
        hints.append("your own graphs hold the facts in question: change them with kg reading set, kg technique "
                     "edit or kg unfollow, or kg undo")
    others = [g for g, k in kinds.items() if k in (GraphKind.source, None) and not g.startswith("import/")]
    if others:
        hints.append(f"refresh the sources ({', '.join(others)}) with kg ingest")
    hint = "; ".join(hints) or "Each line names the node, the property and the fix."
    return ValidationError(f"the graph has {len(violations)} SHACL violations", violations=violations,
                           hint=hint[0].upper() + hint[1:] + ".")


def stats(
    techniques: Annotated[bool, typer.Option("--techniques", help="List every technique.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Counts of what the graph holds, per category, per reading status and per named graph."""
    from kg.cli.output import console, emit, emit_json
    from kg.views import stats as compute
    from kg.wording import counted

    fmt = pick_format(fmt)
    store = state().reader()
    if techniques:
        rows = store.select(
            """SELECT ?id ?name ?category ?onPage WHERE { ?t a tkg:Technique ; skos:notation ?id ;
                 skos:prefLabel ?name ; tkg:onComparisonPage ?onPage ; skos:broader/skos:notation ?category .
                 FILTER(LANG(?name) = "en") } ORDER BY ?category ?name"""
        ).records()
        emit(rows, ["id", "name", "category", "onPage"], fmt=fmt.value, title="Techniques")
        return
    data = compute(store)
    if fmt is Format.json:
        emit_json(data)
        return
    if fmt is Format.csv:  # every table in one sheet, told apart by its section
        rows = [{"section": "graph", "name": k, "count": v} for k, v in data["counts"].items()]
        rows += [{"section": "category", "name": k, "count": v} for k, v in data["per_category"].items()]
        rows += [{"section": "reading status", "name": k, "count": v} for k, v in data["reading"].items()]
        rows += [{"section": "named graph", "name": g["graph"], "count": g["triples"], "modified": g["modified"],
                  "by": g["by"]} for g in data["graphs"]]
        emit(rows, ["section", "name", "count", "modified", "by"], fmt="csv")
        return
    out = console()
    emit([{"what": k.replace("_", " "), "count": v} for k, v in data["counts"].items()], title="The graph")
    emit([{"category": k, "techniques": v} for k, v in data["per_category"].items()], title="Per category")
    r = data["reading_list"]
    emit([{"status": k, "papers": v} for k, v in data["reading"].items()],
         title=f"Reading status of the {r['papers']} papers on the reading list")
    if r["added"]:
        out.print(f"{r['listed']} from the imported list, {r['added']} added one by one; "
                  f"{r['uncategorised']} in none of its categories")
    emit(data["graphs"], ["graph", "triples", "modified", "by"], title="Named graphs")
    out.print(f"{counted(data['triples'], 'triple')} in {counted(len(data['graphs']), 'named graph')}")


def show(
    technique: Annotated[str, typer.Argument(help="Technique name, alias, id or IRI (forgiving).")],
    fmt: FormatOpt = Format.table,
) -> None:
    """A technique's card: what it is, its papers, repository, lineage, kernel and reading status."""
    from kg.cli.output import emit_machine
    from kg.resolve import resolve_technique
    from kg.views import technique_card

    fmt = pick_format(fmt)
    store = state().reader()
    card = technique_card(store, resolve_technique(store, technique))
    if not emit_machine(fmt, card, _card_rows(card), ["field", "value"]):
        _print_card(card)


def _card_rows(card: dict[str, Any]) -> list[dict[str, Any]]:
    """A card as field/value rows for CSV: its facts, then dimensions, lineage and papers."""
    rows = [{"field": k, "value": v} for k, v in card.items()
            if k not in ("dimensions", "parents", "children", "papers", "repository_stats", "paper_counts")
            and v is not None]
    rows += [{"field": f"dimension: {label}", "value": value} for label, value in card["dimensions"]]
    rows += [{"field": f"repository {k}", "value": v}
             for k, v in (card.get("repository_stats") or {}).items() if v is not None]
    rows += [{"field": "derives from", "value": f"{name} ({_relation(relation, basis)})"}
             for name, relation, basis in card["parents"]]
    rows += [{"field": "derived into", "value": f"{name} ({_relation(relation, basis)})"}
             for name, relation, basis in card["children"]]
    rows += [{"field": f"paper ({p['role']})", "value": p.get("title") or p["paper"]} for p in card["papers"]]
    rows += [{"field": f"papers that {_VERBS[role][1]} it", "value": f"{n['papers']} ({n['read']} read)"}
             for role, n in (card.get("paper_counts") or {}).items()]
    return rows


def _relation(relation: str, basis: str | None) -> str:
    """A lineage relation with how it is known: "refines", "extends, inferred", "refines, added by you"."""
    from kg.views import basis_note

    note = basis_note(basis)
    return f"{relation}, {note}" if note else relation


def _print_card(card: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    from kg.cli.output import console
    from kg.views import plain_math

    def e(value: Any) -> str:
        return escape(str(value)) if value is not None else "—"

    out = console()
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold cyan", no_wrap=True)
    head.add_column()
    who = card.get("firstAuthor") or card.get("team")
    head.add_row("Category", e(card["categoryLabel"]))
    head.add_row("Aliases", e(card.get("aliases")))
    organisations = f" · {e(card['organisations'])}" if card.get("organisations") else ""
    head.add_row("First author / team", e(who) + organisations)
    head.add_row("Date", e(card.get("date")) + (f" ({e(card['dateNote'])})" if card.get("dateNote") else ""))
    paper = card.get("paperTitle") or card.get("paper")
    head.add_row("Paper", e(paper) + (f" [dim]arXiv:{e(card['arxivId'])}[/]" if card.get("arxivId") else ""))
    repo = card.get("repository")
    repo_stats = card.get("repository_stats") or {}
    repo_line = e(repo)
    if repo_stats.get("stars") is not None:
        repo_line += f" · ★ {repo_stats['stars']}"
    if repo_stats.get("pushed"):
        repo_line += f" · last push {str(repo_stats['pushed'])[:10]}"
    head.add_row("Repository", repo_line)
    star = " *" if card.get("conditional") else ""
    head.add_row("Headline", f"[bold]{e(card.get('headline'))}{star}[/]")
    if card.get("conditional") and card.get("conditions"):
        head.add_row("", f"[dim]* {e(card['conditions'])}[/]")
    head.add_row("Suits", e(card.get("suits")))
    head.add_row("Availability", e(card.get("availability")))
    head.add_row("Kernel", e(card.get("kernel")))
    if card.get("mine"):
        head.add_row("", "[dim]Yours: you added it (kg technique add); not on the comparison page.[/]")
    elif not card.get("onPage"):
        head.add_row("", "[dim]Lineage-only parent: not on the comparison page.[/]")
    if card.get("amended"):
        head.add_row("", "[dim]With your facts (kg technique edit): where the catalog has one value, yours is "
                         "shown; kg provenance shows both.[/]")
    title = card["name"] + (f"  {card['nameZh']}" if card.get("nameZh") else "")
    out.print(Panel(head, title=f"[bold]{escape(title)}[/]", expand=True))
    if card.get("summary"):
        out.print(escape(card["summary"]))
    if card["dimensions"]:
        dims = Table(show_header=False, box=None, padding=(0, 2))
        dims.add_column(style="bold", no_wrap=True)
        dims.add_column(overflow="fold")
        for label, value in card["dimensions"]:
            dims.add_row(e(label), e(plain_math(value)))
        out.print(dims)
    lineage = [f"derives from {e(n)} ({e(_relation(r, b))})" for n, r, b in card["parents"]]
    lineage += [f"{e(n)} derives from it ({e(_relation(r, b))})" for n, r, b in card["children"]]
    out.print("[bold]Lineage[/]  " + ("; ".join(lineage) if lineage else "none recorded"))
    counts = card.get("paper_counts") or {}
    if counts or card.get("mentions"):
        out.print("[bold]Papers[/]  " + _paper_summary(card["name"], counts, card.get("mentions", 0)))
        shown = 8
        for role in counts:
            rows = sorted((p for p in card["papers"] if p["role"] == role),
                          key=lambda p: (p.get("status") != "read", (p.get("title") or "").casefold()))
            out.print(f"  [bold]{role}[/]")
            for p in rows[:shown]:
                status = p.get("status") or "not on the reading list"
                _bullet(out, f"{p.get('title') or p['paper']} ({status})")
            if len(rows) > shown:
                _bullet(out, f"… and {len(rows) - shown} more: kg links {card['id']} -r {role}", mark=" ")


def _bullet(out: Any, text: str, *, mark: str = "•") -> None:
    """One line of a list, folded under itself at the terminal's width (no trailing spaces)."""
    import textwrap

    from rich.markup import escape

    lines = textwrap.wrap(text, width=max(20, out.width - 6), break_long_words=False, break_on_hyphens=False) or [""]
    out.print(f"    {mark} " + escape(lines[0]), highlight=False)
    for line in lines[1:]:
        out.print("      " + escape(line), highlight=False)


_VERBS = {"introduces": ("introduces", "introduce"), "extends": ("extends", "extend"), "uses": ("uses", "use"),
          "evaluates": ("evaluates", "evaluate")}


def _paper_summary(name: str, counts: dict[str, dict[str, int]], mentions: int) -> str:
    """"14 papers use GQA; you have read 3" for each relation, and how many only mention it."""
    from rich.markup import escape

    parts = []
    for role, n in counts.items():
        one, many = _VERBS[role]
        papers = n["papers"]
        parts.append(f"{papers} paper{'' if papers == 1 else 's'} {one if papers == 1 else many} {escape(name)}; "
                     f"you have read {n['read']}")
    if mentions:
        parts.append(f"{mentions} only mention{'s' if mentions == 1 else ''} it (kg links -r mentions)")
    return "\n  ".join(parts)


def lineage(
    technique: Annotated[str, typer.Argument(help="Technique name, alias, id or IRI.")],
    direction: Annotated[Direction, typer.Option(help="Ancestors (up), descendants (down) or both.")] = Direction.both,
    depth: Annotated[int, typer.Option(min=1, help="Follow at most this many steps.")] = 10,
    fmt: Annotated[LineageFormat, typer.Option(
        "--format", "-f", help="tree, or table / json / csv (one row per step).")] = LineageFormat.tree,
) -> None:
    """Ancestors and descendants of a technique, as a tree with the typed relations."""
    from rich.markup import escape
    from rich.tree import Tree

    from kg.cli.output import console, emit, emit_json
    from kg.resolve import resolve_technique
    from kg.views import LineageNode, lineage_tree
    from kg.wording import counted

    state().json_errors = fmt is LineageFormat.json
    store = state().reader()
    node = resolve_technique(store, technique)
    up, down = lineage_tree(store, node, direction=direction.value, depth=depth)

    def as_dict(n: LineageNode) -> dict[str, Any]:
        out = {"iri": n.iri, "name": n.name, "relation": n.relation, "basis": n.basis,
               "children": [as_dict(c) for c in n.children]}
        if n.basis in ("accepted", "added"):  # added by the reader (kg suggest accept, kg technique)
            out.update(note=n.note)
        return out

    if fmt is LineageFormat.json:
        emit_json({"technique": node.value, "ancestors": as_dict(up)["children"],
                   "descendants": as_dict(down)["children"]})
        return
    if fmt in (LineageFormat.table, LineageFormat.csv):
        rows: list[dict[str, Any]] = []

        def walk(n: LineageNode, level: int, side: str) -> None:
            for child in n.children:
                rows.append({"side": side, "depth": level, "technique": child.name,
                             "relation": _relation(child.relation or "", child.basis) if fmt is LineageFormat.table
                             else child.relation, "basis": child.basis, "of": n.name, "iri": child.iri})
                walk(child, level + 1, side)

        walk(up, 1, "ancestor")
        walk(down, 1, "descendant")
        columns = ["side", "depth", "technique", "relation", "of"] + (
            ["basis", "iri"] if fmt is LineageFormat.csv else [])
        emit(rows, columns, fmt=fmt.value, title=f"Lineage of {up.name}: {counted(len(rows), 'step')}")
        return

    def add(tree: Tree, n: LineageNode, arrow: str) -> None:
        for child in n.children:
            relation = escape(_relation(child.relation or "", child.basis))
            branch = tree.add(f"{arrow} [bold]{escape(child.name)}[/] [dim]({relation})[/]")
            if child.basis == "accepted" and child.note:
                branch.add(f"[dim italic]{escape(child.note)}[/]")
            add(branch, child, arrow)

    root = Tree(f"[bold cyan]{escape(up.name)}[/]")
    if direction in (Direction.up, Direction.both):
        anc = root.add("[bold]derives from[/]" if up.children else "[dim]derives from nothing recorded[/]")
        add(anc, up, "↑")
    if direction in (Direction.down, Direction.both):
        desc = root.add("[bold]derived into[/]" if down.children else "[dim]nothing derives from it yet[/]")
        add(desc, down, "↓")
    console().print(root)


def compare(
    techniques: Annotated[list[str], typer.Argument(help="2 to 4 technique names, aliases or ids.")],
    markdown: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table (same as -f markdown).")] = False,
    fmt: Annotated[CompareFormat, typer.Option("--format", "-f", help="Output format.")] = CompareFormat.table,
) -> None:
    """Side-by-side comparison over the comparison page's dimensions, plus lineage, kernels and reading."""
    from kg.cli.output import emit, emit_json
    from kg.errors import KGError
    from kg.resolve import resolve_technique
    from kg.views import compare as compute
    from kg.views import comparison_markdown, plain_math

    state().json_errors = fmt is CompareFormat.json
    if not 2 <= len(techniques) <= 4:
        raise KGError(f"compare takes 2 to 4 techniques, got {len(techniques)}",
                      hint="Example: kg compare GDN KDA MLA")
    store = state().reader()
    nodes = [resolve_technique(store, t) for t in techniques]
    seen: dict[str, str] = {}
    for name, node in zip(techniques, nodes, strict=True):
        if node.value in seen:
            raise KGError(f"{seen[node.value]!r} and {name!r} name the same technique "
                          f"({node.value.rsplit('/', 1)[-1]}): there is nothing to compare it with",
                          hint="Give 2 to 4 different techniques, e.g. kg compare GDN KDA; kg lineage "
                               f"{name} shows its relatives.")
        seen[node.value] = name
    table = compute(store, nodes)
    if fmt is CompareFormat.json:
        emit_json({"columns": table["columns"], "rows": table["rows"], "conditions": table["conditions"]})
        return
    if markdown or fmt is CompareFormat.markdown:
        print(comparison_markdown(table))
        return
    columns = ["dimension", *table["columns"]]
    rows = [dict(zip(columns, [label, *values], strict=True)) for label, values in table["rows"]]
    if fmt is CompareFormat.csv:
        emit(rows, columns, fmt="csv")
        return
    rows = [{k: plain_math(v) for k, v in row.items()} for row in rows]  # formulas as plain notation
    from rich.markup import escape

    from kg.cli.output import console

    # a dimension's name reads on one line ("Lineage between them"), whatever the cells beside it
    emit(rows, columns, title="Side by side", headers={"dimension": "Dimension"}, lines=True, keep=("dimension",))
    out = console()
    for name, conditions in table["conditions"]:
        out.print(f"[dim]* {escape(name)}: {escape(conditions)}[/]")


def sparql(
    query: Annotated[str, typer.Argument(help="A SPARQL query, or the path of a .rq/.sparql file.")],
    fmt: Annotated[SparqlFormat, typer.Option("--format", "-f", help="Output format.")] = SparqlFormat.table,
    limit: Annotated[Optional[int], typer.Option(help="Print at most this many rows.")] = None,  # noqa: UP045
    default_graph: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--default-graph-uri", metavar="GRAPH", show_default=False,
                     help="A graph (IRI, or a short name such as catalog or reading) merged into the default "
                     "graph instead of the union; repeat for more. With --named-graph-uri it replaces the "
                     "query's FROM / FROM NAMED, as the SPARQL protocol's parameters do."),
    ] = None,
    named_graph: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--named-graph-uri", metavar="GRAPH", show_default=False,
                     help="A graph GRAPH ?g may match; repeat for more."),
    ] = None,
) -> None:
    """Run any SPARQL query over the union of the named graphs (prefixes tkg:, skos:, ... predeclared),
    or over the graphs the query's FROM / FROM NAMED (or --default-graph-uri / --named-graph-uri) name."""
    from kg.cli.output import console, emit
    from kg.results import Solutions, serialize_solutions, serialize_triples
    from kg.sparqlerrors import is_update, update_refused
    from kg.sparqlguard import check_query, run_deep
    from kg.wording import counted

    state().json_errors = fmt is SparqlFormat.json
    path = Path(query)
    is_file = len(query) < 4096 and path.suffix in (".rq", ".sparql") and path.exists()
    text = path.read_text(encoding="utf-8") if is_file else query
    # Bounded before pyoxigraph parses it, and parsed on a deep stack: no query text
    # can overflow the parser's stack and kill the process.
    check_query(text)
    if is_update(text):
        raise update_refused("kg sparql", instead="the endpoint: kg serve --allow-update with KG_SERVE_TOKEN "
                             "set, then POST update=... to /sparql with Authorization: Bearer TOKEN")
    dataset = None
    if default_graph or named_graph:
        from kg.graphs import graph_iri
        from kg.store.base import Dataset

        def graph(name: str) -> Any:
            try:
                return graph_iri(name)
            except ValueError:
                from kg.errors import QueryError

                raise QueryError(f"{name!r} is not a graph name or IRI",
                                 hint="Give an IRI (https://...) or a short name such as catalog; "
                                 "kg graph list shows them.") from None

        dataset = Dataset(default=tuple(graph(g) for g in default_graph or ()),
                          named=tuple(graph(g) for g in named_graph or ()))
    store = state().reader()
    result = run_deep(lambda: store.query(text, max_rows=limit, dataset=dataset))
    write = _stdout_bytes
    if isinstance(result, list):
        rdf = {"table": "turtle", "json": "jsonld"}.get(fmt.value, fmt.value)
        write(serialize_triples(result, rdf))
        return
    if fmt is SparqlFormat.table:
        if isinstance(result, bool):
            console().print("yes" if result else "no")
            return
        assert isinstance(result, Solutions)
        title = counted(len(result), "row") + (" (truncated)" if result.truncated else "")
        emit(result.records(), result.variables, title=title)
        return
    if fmt.value not in ("json", "csv", "tsv", "xml"):
        from kg.errors import KGError

        raise KGError(f"--format {fmt.value} is for CONSTRUCT/DESCRIBE results",
                      hint="Use table, json, csv, tsv or xml for SELECT and ASK.")
    write(serialize_solutions(result, fmt.value))


def _stdout_bytes(data: bytes) -> None:
    import sys

    sys.stdout.flush()
    sys.stdout.buffer.write(data if data.endswith(b"\n") else data + b"\n")
    sys.stdout.buffer.flush()


def validate(
    full: Annotated[bool, typer.Option("--full", help="Evaluate every constraint, not only what changed.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Check the graph against the SHACL shapes (kg/shapes.ttl); exit 1 on any violation.
    Only the constraints that a change since the last validation can affect are evaluated."""
    from kg.cli.output import console, emit, progress_bar
    from kg.validate import cache_for, validate_store

    fmt = pick_format(fmt)
    store = state().reader()
    with progress_bar(show=fmt is Format.table) as bar:
        task = bar.add_task("checking the constraints a change can affect", total=None)
        violations = validate_store(store, cache=cache_for(store), full=full,
                                    progress=lambda done, total: bar.update(task, completed=done, total=total))
    if fmt is not Format.table:
        emit([{"focus": v.focus, "path": v.path, "message": v.message, "value": v.value, "graphs": list(v.graphs)}
              for v in violations], ["focus", "path", "message", "value", "graphs"], fmt=fmt.value)
    elif not violations:
        console().print("[green]✓[/] the graph conforms to the SHACL shapes")
    else:
        emit([{"node": v.focus, "property": v.path, "problem and fix": v.message, "in": list(v.graphs)}
              for v in violations], title=f"{len(violations)} SHACL violations")
    if violations:
        raise _validation_error(violations)


def provenance(
    node: Annotated[str, typer.Argument(help="A node IRI, technique name, arXiv id or GitHub owner/name.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Where each fact about a node came from: its named graph, the run that wrote it and when, the file it was
    read from, and the links that state it."""
    import pyoxigraph as ox

    from kg.cli.output import emit
    from kg.errors import NotFoundError
    from kg.graphs import graph_name
    from kg.iris import parse_arxiv_id
    from kg.resolve import resolve_technique

    fmt = pick_format(fmt)
    store = state().reader()
    if node.startswith(("http://", "https://", "urn:")):
        iri = ox.NamedNode(node)
    else:
        try:
            iri = parse_arxiv_id(node).iri
        except ValueError:
            try:
                iri = resolve_technique(store, node)
            except NotFoundError:
                from kg.iris import repo_iri

                try:
                    iri = repo_iri(node)
                except ValueError:
                    raise NotFoundError(f"{node!r} is no node, technique, arXiv id or repository") from None
    from kg.provenance import fact_provenance
    from kg.results import python_value
    from kg.sources import source_label

    facts = fact_provenance(store, iri)
    if not facts:
        raise NotFoundError(f"the graph holds no facts about {iri.value}")
    if fmt is not Format.table:
        emit([{"graph": graph_name(ox.NamedNode(f.graph)), "property": f.property, "value": python_value(f.value),
               "activity": f.activity, "ended": f.ended, "modified": f.modified,
               "source": [source_label(s) for s in f.sources], "stated_in": f.stated_in} for f in facts],
             ["graph", "property", "value", "activity", "ended", "modified", "source", "stated_in"], fmt=fmt.value)
        return
    _print_provenance(iri, facts)


def _print_provenance(iri: Any, facts: list[Any]) -> None:
    """``kg provenance`` at any width: one short table per graph and source file, headed by
    the run that wrote the graph, then the links that state the facts."""
    import pyoxigraph as ox
    from rich.markup import escape

    from kg.cli.output import console, emit
    from kg.graphs import graph_name
    from kg.sources import source_label
    from kg.wording import counted

    groups: dict[tuple[str, str], list[Any]] = {}
    for f in facts:
        groups.setdefault((f.graph, " ".join(source_label(s) for s in f.sources)), []).append(f)
    out = console()
    out.print(f"[bold]Provenance of {escape(iri.value)}[/]: {counted(len(facts), 'fact')}")
    stated: dict[str, list[str]] = {}
    for (graph, source), group in groups.items():
        head = group[0]
        when = f", {head.ended[:16].replace('T', ' ')}" if head.ended else ""
        by = f"{head.activity}{when}" if head.activity else "no run recorded"
        from_ = f" · {source}" if source else ""
        rows = [{"property": _compact(f.property), "value": _compact_value(f.value)} for f in group]
        emit(rows, ["property", "value"], title=f"{graph_name(ox.NamedNode(graph))}{from_} · {by}",
             short={"value": 120})
        for f in group:
            for link in f.stated_in:
                what = "lineage" if f.lineage else _compact(f.property)
                if what not in stated.setdefault(link, []):
                    stated[link].append(what)
    if stated:
        emit([{"link": link, "states": ", ".join(props)} for link, props in sorted(stated.items())],
             ["link", "states"], title="Where the facts are stated (sources named by the checked fact table)")


def _compact_value(term: Any) -> str:
    """A fact's value as the provenance table shows it: IRIs with their prefix, text as it is."""
    import pyoxigraph as ox

    from kg.vocab import PREFIXES

    if isinstance(term, ox.NamedNode):
        if "/.well-known/genid/" in term.value:  # a node of the catalog's own (an evidence link, a derivation)
            return "_:" + term.value.rsplit("/", 1)[-1][:12]
        for name, base in PREFIXES.items():
            if term.value.startswith(base):
                return f"{name}:{term.value[len(base):]}"
    return str(term.value)


def _compact(iri: str) -> str:
    """``dcterms:title`` for ``http://purl.org/dc/terms/title`` (our standard prefixes)."""
    from kg.vocab import PREFIXES

    for name, base in PREFIXES.items():
        if iri.startswith(base) and name != "id":
            return f"{name}:{iri[len(base):]}"
    return iri


def register(app: typer.Typer) -> None:
    for command in (build, stats, show, lineage, compare, sparql, validate, provenance):
        app.command()(command)
