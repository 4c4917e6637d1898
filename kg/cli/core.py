"""Top-level commands: build, stats, show, lineage, compare, sparql, validate, provenance."""

from __future__ import annotations

from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kg.cli import state

__all__ = ["register"]


class TableFormat(StrEnum):
    table = "table"
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


FormatOpt = Annotated[TableFormat, typer.Option("--format", "-f", help="Output format.")]


def _json_errors(fmt: Enum) -> None:
    state().json_errors = fmt.value == "json"


def build(
    data: Annotated[Optional[Path], typer.Option(help="Catalog directory (default: the packaged kg/data).")] = None,  # noqa: UP045
    reading_list: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--reading-list", "-r", help="Markdown reading list (default: the packaged one)."),
    ] = None,
    validate: Annotated[bool, typer.Option(help="Run SHACL validation after loading.")] = True,
    fmt: FormatOpt = TableFormat.table,
) -> None:
    """Load the catalog and a reading list into the store, validate it and print a summary."""
    from kg.build import build as run_build
    from kg.cli.output import console, emit_json
    from kg.errors import ValidationError

    _json_errors(fmt)
    store = state().store()
    report = run_build(store, data=data, reading_list=reading_list, validate=validate)
    r = report.reading
    summary = {
        "store": store.location,
        "techniques": report.techniques,
        "lineage_only_parents": len(report.catalog.techniques) - report.techniques,
        "categories": len(report.catalog.categories),
        "papers": len(report.catalog.papers),
        "lineage_edges": len(report.catalog.edges),
        "reading_list": {"path": r.path, "entries": r.entries, "read": r.read, "to_read": r.to_read,
                         "with_note": r.with_note, "categories": r.categories,
                         "linked_techniques": r.linked_techniques, "unmatched": r.unmatched,
                         "stated_counts": r.stated_counts, "status_changes": r.status_changes},
        "changed_graphs": report.changed,
        "unchanged_graphs": report.unchanged,
        "triples": report.triples,
        "violations": [str(v) for v in report.violations],
    }
    if fmt is TableFormat.json:
        emit_json(summary)
    else:
        out = console()
        out.print(f"[bold]Built the graph[/] in {store.location}")
        out.print(f"  techniques      {report.techniques} on the comparison page "
                  f"(+{summary['lineage_only_parents']} lineage-only parents) in "
                  f"{summary['categories']} categories")
        out.print(f"  lineage edges   {summary['lineage_edges']}")
        out.print(f"  papers          {summary['papers']} in the bibliography")
        out.print(f"  reading list    {r.entries} entries: {r.read} read, {r.to_read} to read, "
                  f"{r.with_note} with a note, {r.categories} categories ({Path(r.path).name})")
        if r.stated_counts and not r.counts_match:
            out.print(f"  [yellow]the file's header says {r.stated_counts[0]} entries, "
                      f"{r.stated_counts[1]} read, {r.stated_counts[2]} to read[/]")
        if r.unmatched:
            out.print(f"  [yellow]{len(r.unmatched)} entries matched no known paper[/] "
                      "(kept as new papers): " + "; ".join(r.unmatched[:5]))
        out.print(f"  linked to techniques: {', '.join(r.linked_techniques) or 'none'}")
        out.print(f"  graphs written  {', '.join(report.changed) or 'none (everything was up to date)'}")
        out.print(f"  triples         {report.triples}")
        if validate:
            if report.violations:
                for v in report.violations[:20]:
                    out.print(f"  [red]✗[/] {v}")
            else:
                out.print("  [green]✓[/] SHACL validation passed")
    if report.violations:
        raise ValidationError(f"the graph has {len(report.violations)} SHACL violations",
                              violations=report.violations,
                              hint="Fix the data files named above and run kg build again.")


def stats(
    techniques: Annotated[bool, typer.Option("--techniques", help="List every technique.")] = False,
    fmt: FormatOpt = TableFormat.table,
) -> None:
    """Counts of what the graph holds, per category, per reading status and per named graph."""
    from kg.cli.output import console, emit, emit_json
    from kg.views import stats as compute

    _json_errors(fmt)
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
    if fmt is not TableFormat.table:
        if fmt is TableFormat.json:
            emit_json(data)
        else:
            emit([{"what": k, "count": v} for k, v in data["counts"].items()], fmt="csv")
        return
    out = console()
    emit([{"what": k.replace("_", " "), "count": v} for k, v in data["counts"].items()], title="The graph")
    emit([{"category": k, "techniques": v} for k, v in data["per_category"].items()], title="Per category")
    emit([{"status": k, "papers": v} for k, v in data["reading"].items()], title="Reading status")
    emit(data["graphs"], ["graph", "triples", "modified", "by"], title="Named graphs")
    out.print(f"{data['triples']} triples in {len(data['graphs'])} named graphs")


def show(
    technique: Annotated[str, typer.Argument(help="Technique name, alias, id or IRI (forgiving).")],
    fmt: FormatOpt = TableFormat.table,
) -> None:
    """A technique's card: what it is, its papers, repository, lineage, kernel and reading status."""
    from kg.cli.output import emit_json
    from kg.resolve import resolve_technique
    from kg.views import technique_card

    _json_errors(fmt)
    store = state().reader()
    card = technique_card(store, resolve_technique(store, technique))
    if fmt is TableFormat.json:
        emit_json(card)
        return
    _print_card(card)


def _print_card(card: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    from kg.cli.output import console

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
    if not card.get("onPage"):
        head.add_row("", "[dim]Lineage-only parent: not on the comparison page.[/]")
    title = card["name"] + (f"  {card['nameZh']}" if card.get("nameZh") else "")
    out.print(Panel(head, title=f"[bold]{escape(title)}[/]", expand=True))
    if card.get("summary"):
        out.print(escape(card["summary"]))
    if card["dimensions"]:
        dims = Table(show_header=False, box=None, padding=(0, 2))
        dims.add_column(style="bold", no_wrap=True)
        dims.add_column(overflow="fold")
        for label, value in card["dimensions"]:
            dims.add_row(e(label), e(value))
        out.print(dims)
    lineage = [f"derives from {e(n)} ({r})" for n, r in card["parents"]]
    lineage += [f"{e(n)} derives from it ({r})" for n, r in card["children"]]
    out.print("[bold]Lineage[/]  " + ("; ".join(lineage) if lineage else "none recorded"))
    if card["papers"]:
        out.print("[bold]Papers[/]")
        for p in card["papers"]:
            status = p.get("status") or "not on the reading list"
            out.print(f"  • {e(p.get('title') or p['paper'])} [dim]({p['role']}; {status})[/]")


def lineage(
    technique: Annotated[str, typer.Argument(help="Technique name, alias, id or IRI.")],
    direction: Annotated[Direction, typer.Option(help="Ancestors (up), descendants (down) or both.")] = Direction.both,
    depth: Annotated[int, typer.Option(min=1, help="Follow at most this many steps.")] = 10,
    fmt: Annotated[str, typer.Option("--format", "-f", help="tree or json.")] = "tree",
) -> None:
    """Ancestors and descendants of a technique, as a tree with the typed relations."""
    from rich.markup import escape
    from rich.tree import Tree

    from kg.cli.output import console, emit_json
    from kg.resolve import resolve_technique
    from kg.views import LineageNode, lineage_tree

    state().json_errors = fmt == "json"
    store = state().reader()
    node = resolve_technique(store, technique)
    up, down = lineage_tree(store, node, direction=direction.value, depth=depth)

    def as_dict(n: LineageNode) -> dict[str, Any]:
        out = {"iri": n.iri, "name": n.name, "relation": n.relation, "children": [as_dict(c) for c in n.children]}
        if n.basis == "accepted":  # added by the reader (kg suggest accept), with its evidence
            out.update(basis=n.basis, note=n.note)
        return out

    if fmt == "json":
        emit_json({"technique": node.value, "ancestors": as_dict(up)["children"],
                   "descendants": as_dict(down)["children"]})
        return

    def add(tree: Tree, n: LineageNode, arrow: str) -> None:
        for child in n.children:
            mark = ", added by you" if child.basis == "accepted" else ""
            branch = tree.add(f"{arrow} [bold]{escape(child.name)}[/] [dim]({child.relation}{mark})[/]")
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
    markdown: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, markdown or json.")] = "table",
) -> None:
    """Side-by-side comparison over the comparison page's dimensions, plus lineage, kernels and reading."""
    from kg.cli.output import emit_json
    from kg.errors import KGError
    from kg.resolve import resolve_technique
    from kg.views import compare as compute

    state().json_errors = fmt == "json"
    if not 2 <= len(techniques) <= 4:
        raise KGError(f"compare takes 2 to 4 techniques, got {len(techniques)}",
                      hint="Example: kg compare GDN KDA Mamba2")
    store = state().reader()
    nodes = [resolve_technique(store, t) for t in techniques]
    table = compute(store, nodes)
    if fmt == "json":
        emit_json({"columns": table["columns"], "rows": table["rows"], "conditions": table["conditions"]})
        return
    if markdown or fmt == "markdown":
        print(comparison_markdown(table))
        return
    from rich.markup import escape
    from rich.table import Table

    from kg.cli.output import console

    t = Table(title="Side by side", show_lines=True, header_style="bold")
    t.add_column("Dimension", style="bold cyan", no_wrap=True)
    for c in table["columns"]:
        t.add_column(escape(c), overflow="fold", ratio=1)
    for label, values in table["rows"]:
        t.add_row(escape(label), *[escape(v) for v in values])
    out = console()
    out.print(t)
    for name, conditions in table["conditions"]:
        out.print(f"[dim]* {escape(name)}: {escape(conditions)}[/]")


def comparison_markdown(table: dict[str, Any]) -> str:
    """The comparison as a GitHub-flavoured Markdown table."""

    def cell(value: str) -> str:
        return value.replace("|", "\\|").replace("\n", " ")

    lines = ["| Dimension | " + " | ".join(cell(c) for c in table["columns"]) + " |",
             "|---" * (len(table["columns"]) + 1) + "|"]
    for label, values in table["rows"]:
        lines.append(f"| {cell(label)} | " + " | ".join(cell(v) for v in values) + " |")
    for name, conditions in table["conditions"]:
        lines.append(f"\n\\* {cell(name)}: {cell(conditions)}")
    return "\n".join(lines)


def sparql(
    query: Annotated[str, typer.Argument(help="A SPARQL query, or the path of a .rq/.sparql file.")],
    fmt: Annotated[SparqlFormat, typer.Option("--format", "-f", help="Output format.")] = SparqlFormat.table,
    limit: Annotated[Optional[int], typer.Option(help="Print at most this many rows.")] = None,  # noqa: UP045
) -> None:
    """Run any SPARQL query over the union of the named graphs (prefixes tkg:, skos:, ... predeclared)."""
    from kg.cli.output import console, emit
    from kg.results import Solutions, serialize_solutions, serialize_triples
    from kg.sparqlguard import check_query, run_deep

    _json_errors(fmt)
    path = Path(query)
    is_file = len(query) < 4096 and path.suffix in (".rq", ".sparql") and path.exists()
    text = path.read_text(encoding="utf-8") if is_file else query
    # Bounded before pyoxigraph parses it, and parsed on a deep stack: no query text
    # can overflow the parser's stack and kill the process.
    check_query(text)
    store = state().reader()
    result = run_deep(lambda: store.query(text, max_rows=limit))
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
        title = f"{len(result)} rows" + (" (truncated)" if result.truncated else "")
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


def validate(fmt: FormatOpt = TableFormat.table) -> None:
    """Check the graph against the SHACL shapes (kg/shapes.ttl); exit 1 on any violation."""
    from kg.cli.output import console, emit
    from kg.errors import ValidationError
    from kg.validate import validate_store

    _json_errors(fmt)
    violations = validate_store(state().reader())
    if fmt is not TableFormat.table:
        emit([{"focus": v.focus, "path": v.path, "message": v.message, "value": v.value} for v in violations],
             ["focus", "path", "message", "value"], fmt=fmt.value)
    elif not violations:
        console().print("[green]✓[/] the graph conforms to the SHACL shapes")
    else:
        emit([{"node": v.focus, "property": v.path, "problem and fix": v.message} for v in violations],
             title=f"{len(violations)} SHACL violations")
    if violations:
        raise ValidationError(f"{len(violations)} SHACL violations", violations=violations,
                              hint="Each line names the node, the property and the fix.")


def provenance(
    node: Annotated[str, typer.Argument(help="A node IRI, technique name, arXiv id or GitHub owner/name.")],
    fmt: FormatOpt = TableFormat.table,
) -> None:
    """Where each fact about a node came from: its named graph, the run that wrote it, what that run read, and when."""
    import pyoxigraph as ox

    from kg.cli.output import emit
    from kg.errors import NotFoundError
    from kg.graphs import PROVENANCE, graph_name
    from kg.iris import parse_arxiv_id
    from kg.resolve import resolve_technique

    _json_errors(fmt)
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
    rows = store.select(
        f"""SELECT ?node ?graph ?property ?value ?activity ?ended ?modified WHERE {{
              GRAPH ?graph {{ ?node ?property ?value }}
              FILTER(?graph != {PROVENANCE})
              OPTIONAL {{ GRAPH {PROVENANCE} {{ ?graph prov:wasGeneratedBy ?act . ?act rdfs:label ?activity ;
                           prov:endedAtTime ?ended }} }}
              OPTIONAL {{ GRAPH {PROVENANCE} {{ ?graph dcterms:modified ?modified }} }}
            }} ORDER BY ?graph ?property""",
        {"node": iri},
    ).records()
    if not rows:
        raise NotFoundError(f"the graph holds no facts about {iri.value}")
    used: dict[str, list[str]] = {}
    for row in store.select(f"""SELECT ?graph ?used WHERE {{ GRAPH {PROVENANCE} {{
                                  ?graph prov:wasGeneratedBy ?act . ?act prov:used ?used }} }}""").records():
        used.setdefault(row["graph"], []).append(row["used"])
    for r in rows:
        r["source"] = " ".join(sorted(used.get(r["graph"], [])))
        r["graph"] = graph_name(ox.NamedNode(r["graph"]))
        if fmt is TableFormat.table:
            r["property"] = _compact(r["property"])
            value = str(r["value"])
            r["value"] = value if len(value) <= 80 else value[:77] + "..."
    emit(rows, ["graph", "property", "value", "activity", "source", "modified"], fmt=fmt.value,
         title=f"Provenance of {iri.value}")


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
