"""One set of habits across commands: -f/--format everywhere, --version, a short query list,
notes in the reading list, SPARQL errors that say what is wrong, tables that fit 80 columns."""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

NARROW = {"COLUMNS": "80"}


def _leaf_commands() -> list[tuple[str, object]]:
    import typer
    import typer.main

    from kg.cli import app

    out: list[tuple[str, object]] = []

    def walk(command: object, path: str) -> None:
        if hasattr(command, "list_commands"):  # a group: kg's loads its commands when asked (kg.cli._LazyGroup)
            ctx = typer.Context(command)  # type: ignore[arg-type]
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), f"{path} {name}".strip())  # type: ignore[attr-defined]
        else:
            out.append((path, command))

    walk(typer.main.get_command(app), "")
    return out


def test_every_command_takes_a_format_option() -> None:
    commands = _leaf_commands()
    assert len(commands) > 25
    missing = [path for path, command in commands
               if not any("--format" in getattr(p, "opts", ()) and "-f" in getattr(p, "opts", ())
                          for p in command.params)]  # type: ignore[attr-defined]
    assert missing == []


def test_version_is_the_package_version(kg_cli) -> None:
    out = kg_cli("--version", check=True).stdout
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert out.startswith(f"kg (TechKG) {version}")
    assert kg_cli("-V", check=True).stdout == out


def test_show_as_csv_is_field_value_rows(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("show", "GDN", "-f", "csv", store=built_store_path, check=True).stdout
    rows = {r["field"]: r["value"] for r in csv.DictReader(io.StringIO(out))}
    assert rows["name"] == "Gated DeltaNet"
    assert rows["arxivId"] == "2412.06464"
    assert any(k.startswith("dimension: ") for k in rows) and "derives from" in rows


def test_compare_and_lineage_take_csv(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("compare", "GDN", "KDA", "-f", "csv", store=built_store_path, check=True).stdout
    table = list(csv.DictReader(io.StringIO(out)))
    assert list(table[0]) == ["dimension", "Gated DeltaNet", "Kimi Delta Attention"]
    out = kg_cli("lineage", "KDA", "--direction", "up", "-f", "csv", store=built_store_path, check=True).stdout
    steps = list(csv.DictReader(io.StringIO(out)))
    assert {"Gated DeltaNet", "DeltaNet"} <= {s["technique"] for s in steps}
    assert {s["side"] for s in steps} == {"ancestor"}


def test_build_summary_as_csv(kg_cli, tmp_path: Path) -> None:
    out = kg_cli("build", "--no-validate", "-f", "csv", store=tmp_path / "s", check=True).stdout
    rows = {r["key"]: r["value"] for r in csv.DictReader(io.StringIO(out))}
    assert rows["techniques"] == "39" and rows["reading_list.entries"] == "53"


def test_import_rdf_reads_the_syntax_from_syntax_and_reports_in_the_format(kg_cli, built_store_path: Path,
                                                                           tmp_path: Path) -> None:
    dump = tmp_path / "extract.data"
    dump.write_text("<http://example.org/a> <http://example.org/b> <http://example.org/c> .\n")
    old = kg_cli("import", "rdf", str(dump), "--graph", "x", "-f", "ntriples", store=built_store_path)
    assert old.returncode == 1 and "--syntax ntriples" in old.stderr
    out = kg_cli("import", "rdf", str(dump), "--graph", "x", "--syntax", "ntriples", "-f", "json",
                 store=built_store_path, check=True).stdout
    assert json.loads(out)["triples"] == 1


def test_query_list_is_one_line_per_query_and_verbose_says_the_rest(kg_cli) -> None:
    import queries

    named = queries.all_queries()
    lines = kg_cli("query", "--list", env=NARROW, check=True).stdout.splitlines()
    assert len(lines) == len(named) + 1
    assert all(len(line) <= 80 for line in lines)
    for line, q in zip(lines[1:], named, strict=True):
        assert re.match(rf"{re.escape(q.name)} +\S", line)
    verbose = kg_cli("query", "--list", "--verbose", check=True).stdout
    ancestors = queries.get("ancestors")
    assert " ".join(ancestors.description.split()[:6]) in " ".join(verbose.split())
    assert "-p technique=" in verbose and "returns ?ancestor" in verbose
    assert len(verbose.splitlines()) > 3 * len(named)


def _add_note(store_path: Path, title: str, body: str) -> str:
    from pyoxigraph import Literal, NamedNode, Triple

    from kg.graphs import graph_iri
    from kg.reading import reading_rows
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore
    from kg.vocab import RDF, TKG

    store = OxigraphStore(store_path)
    try:
        paper = next(r["paper"] for r in reading_rows(store) if r["title"] == title)
        note = NamedNode("https://w3id.org/techkg/id/note/test-1")
        with store.transaction(Activity("test: a synced Zotero note")) as tx:
            tx.insert(graph_iri("zotero"), [Triple(note, RDF.type, TKG.Note),
                                            Triple(note, TKG.noteOf, NamedNode(paper)),
                                            Triple(note, RDF.value, Literal(body))])
    finally:
        store.close()
    return str(paper)


def test_reading_list_shows_notes_short_in_tables_and_whole_in_json_and_csv(kg_cli, built_store_path: Path) -> None:
    title = "Mixed Precision Training"
    html = ("<p>Loss scaling keeps small FP16 gradients from flushing to zero; master weights stay in FP32 "
            "so that tiny updates are not lost.</p><p>Read with the Micikevicius et al. appendix.</p>")
    _add_note(built_store_path, title, html)
    table = kg_cli("reading", "list", "--category", "Numerics", store=built_store_path, check=True).stdout
    assert "Loss scaling keeps small FP16" in table and "appendix" not in table and "…" in table
    assert "<p>" not in table
    rows = json.loads(kg_cli("reading", "list", "-f", "json", store=built_store_path, check=True).stdout)
    row = next(r for r in rows if r["title"] == title)
    assert row["note"].startswith("Loss scaling") and row["note"].endswith("appendix.")
    assert "\n" in row["note"] and row["has_note"] is True
    out = kg_cli("reading", "list", "-f", "csv", store=built_store_path, check=True).stdout
    assert next(r for r in csv.DictReader(io.StringIO(out)) if r["title"] == title)["note"] == row["note"]


def test_reading_list_shows_the_time_of_the_last_change(kg_cli, built_store_path: Path) -> None:
    import datetime as dt

    kg_cli("reading", "set", "GPipe", "reading", store=built_store_path, check=True)
    rows = json.loads(kg_cli("reading", "list", "-f", "json", store=built_store_path, check=True).stdout)
    changed = dt.datetime.fromisoformat(next(r for r in rows if r["title"].startswith("GPipe"))["changed"])
    assert abs((dt.datetime.now(dt.UTC) - changed).total_seconds()) < 120
    table = kg_cli("reading", "list", "--status", "reading", store=built_store_path, check=True).stdout
    assert changed.astimezone().strftime("%Y-%m-%d %H:%M") in table


def test_reading_set_reports_as_json(kg_cli, built_store_path: Path) -> None:
    out = json.loads(kg_cli("reading", "set", "GPipe", "read", "-f", "json", store=built_store_path,
                            check=True).stdout)
    assert (out["previous"], out["status"], out["via"]) == ("to-read", "read", "cli")


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_progress_bars_leave_a_pipe_alone(kg_cli, built_store_path: Path, fmt: str) -> None:
    done = kg_cli("validate", "--full", "-f", fmt, store=built_store_path, check=True)
    assert done.stderr == ""  # no bar and no blank line where stderr is not a terminal
    if fmt == "json":
        assert json.loads(done.stdout) == []


def test_an_unknown_prefix_is_named_with_the_predeclared_ones(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("sparql", "SELECT ?x WHERE { ?x foo:bar ?y }", store=built_store_path)
    assert out.returncode == 1
    text = " ".join(out.stderr.split())
    assert "unknown prefix foo:" in text and "tkg:, " in text and "skos:" in text
    assert "\\u{" not in out.stderr


def test_an_update_is_refused_by_kg_sparql_and_changes_nothing(kg_cli, built_store_path: Path) -> None:
    before = kg_cli("sparql", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "-f", "csv",
                    store=built_store_path, check=True).stdout
    out = kg_cli("sparql", "PREFIX ex: <http://example.org/>\nINSERT DATA { ex:a ex:b ex:c }", store=built_store_path)
    assert out.returncode == 1
    text = " ".join(out.stderr.split())
    assert "updates are not run by kg sparql; use" in text and "--allow-update" in text
    assert "expected CONSTRUCT" not in text
    after = kg_cli("sparql", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "-f", "csv",
                   store=built_store_path, check=True).stdout
    assert after == before


def test_a_syntax_error_is_shown_at_its_place(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("sparql", "SELECT ?x WHERE { ?x ?p ?y", store=built_store_path)
    assert out.returncode == 1
    assert "line 1, column" in out.stderr and "^" in out.stderr and "\\u{" not in out.stderr


@pytest.mark.parametrize("width", [80, 100, 160])
def test_kernels_list_fits_the_terminal_without_splitting_ids(kg_cli, built_store_path: Path, width: int) -> None:
    from kernels.registry import entries

    text = kg_cli("kernels", "list", env={"COLUMNS": str(width)}, store=built_store_path, check=True).stdout
    assert all(len(line.rstrip()) <= width for line in text.splitlines())
    words = set(text.split())
    assert {e.technique for e in entries()} <= words


def test_no_consumer_imports_the_cli() -> None:
    offenders = [str(path.relative_to(ROOT)) for folder in ("kg", "exports", "ingest", "queries", "kernels")
                 for path in (ROOT / folder).rglob("*.py")
                 if "cli" not in path.relative_to(ROOT).parts
                 and re.search(r"^\s*(from|import) kg\.cli\b", path.read_text(encoding="utf-8"), re.MULTILINE)]
    assert offenders == []


def test_serve_prints_its_addresses_as_one_json_line(built_store_path: Path) -> None:
    import os
    import subprocess
    import sys

    import httpx

    exe = Path(sys.executable).with_name("kg")
    with subprocess.Popen([str(exe), "--store", str(built_store_path), "serve", "--port", "0", "-f", "json",
                           "--log-level", "warning"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          env={**os.environ, "COLUMNS": "80"}) as proc:
        try:
            assert proc.stdout is not None
            info = json.loads(proc.stdout.readline())
            assert info["sparql"] == info["workbench"] + "sparql" and info["allow_update"] is False
            assert httpx.get(info["workbench"], timeout=30).status_code == 200
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.mark.parametrize("width", [80, 100])
def test_a_command_s_help_folds_its_prose_at_the_terminal_s_width(kg_cli, width: int) -> None:
    text = kg_cli("kernels", "verify", "--help", env={"COLUMNS": str(width)}, check=True).stdout
    prose = text.split("╭")[0].split("\n")[3:]  # below the usage line, above the boxes
    paragraph = [line.strip() for line in prose if line.strip()]
    assert len(paragraph) >= 3
    # Every line but a paragraph's last fills most of the width: no docstring line breaks
    # left in the middle ("... say what they" / "measured below it ...").
    last_of_paragraph = {i for i, line in enumerate(prose) if line.strip() and not prose[i + 1].strip()}
    short = [line for i, line in enumerate(prose) if line.strip() and i not in last_of_paragraph
             and len(line.strip()) < width - 25]
    assert short == []


@pytest.mark.parametrize("command", [(), ("query",), ("export", "lineage"), ("reading", "list")],
                         ids=["kg", "query", "export-lineage", "reading-list"])
def test_help_shows_no_type_for_a_flag_and_a_repeatable_option_as_repeatable(kg_cli, command) -> None:
    text = kg_cli(*command, "--help", env={"COLUMNS": "100"}, check=True).stdout
    help_row = next(line for line in text.splitlines() if "--help" in line)
    assert "Show this message" in help_row and "<" not in help_row
    assert "<bool>" not in text and "<list[" not in text
    if command in (("query",), ("export", "lineage")):
        assert ">..." in text  # --param / --category: given more than once


def test_reading_list_reads_at_80_columns_and_names_the_statuses_there_are(kg_cli, built_store_path: Path) -> None:
    narrow = kg_cli("reading", "list", store=built_store_path, env={"COLUMNS": "80"}, check=True).stdout
    lines = narrow.splitlines()
    assert re.match(r"status\s+title\s+techniques\s+categories\s+note\s*$", lines[1]) and "status:" not in narrow
    assert max(len(line.rstrip()) for line in lines) <= 80 and "--wide adds" in narrow
    wide = kg_cli("reading", "list", "--wide", store=built_store_path, env={"COLUMNS": "200"}, check=True).stdout
    assert re.match(r"status\s+title\s+techniques\s+categories\s+venue\s+note\s+changed\s*$",
                    wide.splitlines()[1])
    bogus = kg_cli("reading", "list", "--status", "bogus", store=built_store_path)
    assert bogus.returncode == 1 and "to-read, reading, read, skipped" in bogus.stderr
    kg_cli("reading", "set", "GPipe", "On hold", "--custom", store=built_store_path, check=True)
    custom = kg_cli("reading", "list", "--status", "nope", store=built_store_path)
    assert "on-hold" in custom.stderr  # a status of one's own is among the valid ones
    held = kg_cli("reading", "list", "--status", "On hold", "-f", "json", store=built_store_path, check=True).stdout
    assert len(json.loads(held)) == 1


def test_a_long_reading_list_prints_as_its_rows_come_within_80_columns(built_store_path: Path, monkeypatch) -> None:
    """Past STREAM_ABOVE papers the table is written row by row (rich laid out 61k rows in
    25 s before printing one), with the same short cells, and fits 80 columns."""
    from rich.cells import cell_len
    from typer.testing import CliRunner

    import kg.cli.output as output
    from kg.cli import app

    listed = json.loads(CliRunner().invoke(app, ["--store", str(built_store_path), "reading", "list", "-f", "json"]
                                           ).stdout)
    monkeypatch.setattr(output, "STREAM_ABOVE", 5)
    monkeypatch.setenv("COLUMNS", "80")
    done = CliRunner().invoke(app, ["--store", str(built_store_path), "reading", "list"])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == "Reading list" and f"{len(listed)} papers" in lines
    assert all(cell_len(line) <= 80 for line in lines)
    starts = [line for line in lines if line.split(" ", 1)[0] in {row["status"] for row in listed}]
    assert len(starts) == len(listed)  # a row each, in the list's order, its title's first word beside its status
    assert all(line.split()[1] == row["title"].split()[0] for line, row in zip(starts, listed, strict=True))
