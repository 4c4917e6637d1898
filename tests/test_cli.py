"""The real `kg` console script, end to end."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys, kg.cli\n"
        "heavy = ['torch', 'rdflib', 'pyshacl', 'duckdb', 'httpx', 'pyoxigraph', 'networkx', 'matplotlib']\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_command_has_help(kg_cli) -> None:
    out = kg_cli("--help", check=True)
    for command in ("build", "stats", "show", "lineage", "compare", "sparql", "validate", "import", "reading"):
        assert command in out.stdout
    import typer.main

    from kg.cli import app

    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    names = group.list_commands(ctx)  # type: ignore[attr-defined]
    assert {"build", "suggest", "ingest", "backup", "query", "serve"} <= set(names)
    for name in names:
        command = group.get_command(ctx, name)  # type: ignore[attr-defined]
        assert command is not None and command.help, f"kg {name} has no help"


def test_a_command_loads_only_its_own_group() -> None:
    # kg suggest ... imports and makes kg.cli.suggest alone, not every command group.
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from kg.cli import app\n"
        "r = CliRunner().invoke(app, ['suggest', 'accept', '--help'])\n"
        "print(r.exit_code, sorted(m for m in sys.modules if m.startswith('kg.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split(" ", 1) == ["0", "['kg.cli.coercion', 'kg.cli.core', 'kg.cli.output', 'kg.cli.suggest']\n"]


def test_the_lazily_loaded_commands_are_those_their_modules_register() -> None:
    import importlib

    import typer.main

    from kg.cli import _COMMANDS, _GROUPS

    for module, names in _COMMANDS.items():
        scratch = typer.Typer()
        importlib.import_module(module).register(scratch)
        assert tuple(typer.main.get_group(scratch).commands) == names
    for name, modules in _GROUPS.items():
        assert isinstance(importlib.import_module(modules.split()[0]).app, typer.Typer), name


def test_build_on_a_fresh_store_reports_counts_and_validates(kg_cli, tmp_path: Path) -> None:
    store = tmp_path / "store"
    out = kg_cli("build", "--format", "json", store=store, check=True)
    summary = json.loads(out.stdout)
    assert summary["techniques"] == 39 and summary["categories"] == 9
    assert summary["reading_list"]["entries"] == 53
    assert (summary["reading_list"]["read"], summary["reading_list"]["to_read"]) == (8, 45)
    assert summary["violations"] == []
    again = json.loads(kg_cli("build", "--format", "json", "--no-validate", store=store, check=True).stdout)
    assert again["triples"] == summary["triples"] and again["changed_graphs"] == []


def test_build_uses_the_default_store_when_none_is_given(kg_cli, tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    out = kg_cli("build", "--no-validate", env=env, check=True)
    assert str(tmp_path / "xdg" / "techkg" / "store") in out.stdout


def test_build_with_the_seed_reading_list(kg_cli, tmp_path: Path, seed_reading_list: Path) -> None:
    out = kg_cli("build", "-r", str(seed_reading_list), "--format", "json", "--no-validate",
                 store=tmp_path / "s", check=True)
    assert json.loads(out.stdout)["imported"]["unmatched"] == []


def test_show_matches_names_forgivingly(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("show", "gated-deltanet", store=built_store_path, check=True)
    assert "Gated DeltaNet" in out.stdout and "Songlin Yang" in out.stdout
    card = json.loads(kg_cli("show", "gdn", "-f", "json", store=built_store_path, check=True).stdout)
    assert card["name"] == "Gated DeltaNet" and card["arxivId"] == "2412.06464"
    assert ("Kimi Delta Attention", "refines", "stated") in [tuple(c) for c in card["children"]]


def test_unknown_technique_suggests_the_closest(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("show", "Gated DeltaNett", store=built_store_path)
    assert out.returncode == 1
    assert "no technique is called" in out.stderr and "Gated DeltaNet" in out.stderr
    assert "Traceback" not in out.stderr
    as_json = kg_cli("show", "zzzz-nothing", "-f", "json", store=built_store_path)
    assert json.loads(as_json.stdout)["ok"] is False


def test_lineage_prints_ancestors_and_descendants(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("lineage", "MLA", store=built_store_path, check=True)
    assert "Full Attention / Transformer" in out.stdout and "DeepSeek Sparse Attention" in out.stdout
    tree = json.loads(kg_cli("lineage", "MQA", "-f", "json", "--direction", "down", store=built_store_path,
                             check=True).stdout)
    assert [c["name"] for c in tree["descendants"]] == ["Grouped-Query Attention"]
    assert tree["descendants"][0]["relation"] == "generalizes"


def test_compare_prints_the_side_by_side_table_and_markdown(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("compare", "GDN", "KDA", "Mamba2", store=built_store_path, check=True)
    for label in ("Core mechanism", "S · Situation", "Lineage between them", "Reference kernel"):
        assert label in out.stdout
    md = kg_cli("compare", "FSDP1", "FSDP2", "veScale-FSDP", "--markdown", store=built_store_path, check=True).stdout
    header = md.splitlines()[0]
    assert header.startswith("| Dimension | PyTorch FSDP1 | PyTorch FSDP2 |")
    assert "| Lineage between them |" in md
    bad = kg_cli("compare", "GDN", store=built_store_path)
    assert bad.returncode == 1 and "2 to 4" in bad.stderr


def test_sparql_in_the_standard_result_formats(kg_cli, built_store_path: Path) -> None:
    q = "SELECT ?id WHERE { ?t a tkg:Technique ; skos:notation ?id ; tkg:onComparisonPage true } ORDER BY ?id"
    doc = json.loads(kg_cli("sparql", q, "-f", "json", store=built_store_path, check=True).stdout)
    assert doc["head"]["vars"] == ["id"] and len(doc["results"]["bindings"]) == 39
    rows = list(csv.reader(io.StringIO(kg_cli("sparql", q, "-f", "csv", store=built_store_path, check=True).stdout)))
    assert rows[0] == ["id"] and len(rows) == 40
    ttl = kg_cli("sparql", "CONSTRUCT { ?t a tkg:Technique } WHERE { ?t a tkg:Technique } LIMIT 2",
                 store=built_store_path, check=True).stdout
    assert "tkg:Technique" in ttl
    bad = kg_cli("sparql", "SELECT WHERE {", store=built_store_path)
    assert bad.returncode == 1 and "malformed" in bad.stderr


def test_reading_set_and_list(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("reading", "set", "GPipe", "read", store=built_store_path, check=True)
    assert "to-read → read" in out.stdout
    rows = json.loads(kg_cli("reading", "list", "--status", "read", "-f", "json", store=built_store_path,
                             check=True).stdout)
    assert len(rows) == 9 and any(r["title"].startswith("GPipe") for r in rows)


def test_import_rdf_into_a_named_graph(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    dump = tmp_path / "extract.ttl"
    dump.write_text('@prefix ex: <http://example.org/> .\nex:a ex:p "1" , "2" .\n', encoding="utf-8")
    out = json.loads(kg_cli("import", "rdf", str(dump), "--graph", "orkg", "--json", store=built_store_path,
                            check=True).stdout)
    assert out["triples"] == 2 and out["graph"].endswith("/graph/import/orkg")
    broken = tmp_path / "broken.ttl"
    broken.write_text("ex:a ex:p", encoding="utf-8")
    bad = kg_cli("import", "rdf", str(broken), "--graph", "orkg", store=built_store_path)
    assert bad.returncode == 1 and "broken.ttl" in bad.stderr
    orkg = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <https://w3id.org/techkg/graph/import/orkg> { ?s ?p ?o } }"
    count = json.loads(kg_cli("sparql", orkg,
                              "-f", "json", store=built_store_path, check=True).stdout)
    assert count["results"]["bindings"][0]["n"]["value"] == "2"


def test_import_rdf_again_says_what_the_replacement_added_and_removed(kg_cli, built_store_path: Path,
                                                                      tmp_path: Path) -> None:
    dump = tmp_path / "extract.nt"
    dump.write_text("".join(f'<http://example.org/s{i}> <http://example.org/p> "{i}" .\n' for i in range(5)),
                    encoding="utf-8")
    first = json.loads(kg_cli("import", "rdf", str(dump), "--graph", "orkg", "-f", "json",
                              store=built_store_path, check=True).stdout)
    assert (first["triples"], first["added"], first["removed"]) == (5, 5, 0)
    dump.write_text("".join(f'<http://example.org/s{i}> <http://example.org/p> "{i}" .\n' for i in range(3, 7)),
                    encoding="utf-8")
    again = kg_cli("import", "rdf", str(dump), "--graph", "orkg", store=built_store_path, check=True)
    assert "Replaced <https://w3id.org/techkg/graph/import/orkg>: 4 triples (2 added, 3 removed)" in again.stdout
    assert again.stderr == ""  # no progress bar in a pipe

def test_validate_and_provenance(kg_cli, built_store_path: Path) -> None:
    assert "conforms" in kg_cli("validate", store=built_store_path, check=True).stdout
    prov = json.loads(kg_cli("provenance", "KDA", "-f", "json", store=built_store_path, check=True).stdout)
    assert {r["graph"] for r in prov} == {"catalog"}
    assert all(r["activity"] == "kg build" for r in prov)


def test_a_locked_store_is_reported_to_a_writer_without_a_traceback_and_readers_go_on(
    kg_cli, built_store_path: Path
) -> None:
    from kg.store.embedded import OxigraphStore

    holder = OxigraphStore(built_store_path, command="kg sync zotero")
    try:
        writer = kg_cli("--wait", "0.2", "reading", "set", "GPipe", "read", store=built_store_path)
        reader = kg_cli("stats", "-f", "json", store=built_store_path)
    finally:
        holder.close()
    assert writer.returncode == 1
    assert "in use by `kg sync zotero`" in writer.stderr and "Traceback" not in writer.stderr
    assert reader.returncode == 0 and json.loads(reader.stdout)["counts"]["techniques"] == 39


def test_one_of_a_thing_is_never_plural(kg_cli, built_store_path: Path) -> None:
    from kg.wording import counted

    assert (counted(1, "row"), counted(2, "row"), counted(1, "entry", "entries"), counted(1200, "row", grouped=True)) \
        == ("1 row", "2 rows", "1 entry", "1,200 rows")
    one = kg_cli("sparql", "SELECT ?x WHERE { VALUES ?x { 1 } }", store=built_store_path, check=True).stdout
    assert one.startswith("1 row\n")
    query = kg_cli("query", "technique", "-p", "technique=KDA", store=built_store_path, check=True).stdout
    assert ": 1 row" in query and "1 rows" not in query
    steps = kg_cli("lineage", "Megatron TP", "-f", "table", store=built_store_path, check=True).stdout
    assert ": 1 step\n" in steps


def test_a_comparison_names_a_lineage_only_parent_once_and_refuses_one_technique_twice(
    kg_cli, built_store_path: Path
) -> None:
    compared = json.loads(kg_cli("compare", "GDN", "KDA", "Mamba2", "-f", "json", store=built_store_path,
                                 check=True).stdout)
    mamba2 = [values[2] for _label, values in compared["rows"]]
    assert "not recorded" not in mamba2 and sum("Lineage-only" in v for v in mamba2) == 1
    assert dict(compared["rows"])["Category · date"][2] == "Attention · lineage-only parent"
    same = kg_cli("compare", "GDN", "Gated DeltaNet", store=built_store_path)
    assert same.returncode == 1 and "name the same technique" in same.stderr and "kg compare GDN KDA" in same.stderr
