"""``kg export`` through the real console script."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import networkx as nx
import pyoxigraph as ox


def test_lineage_export_infers_the_format_and_never_overwrites_without_force(kg_cli, built_store_path: Path,
                                                                            tmp_path: Path) -> None:
    target = tmp_path / "lineage.svg"
    out = kg_cli("export", "lineage", "-o", str(target), store=built_store_path, check=True)
    assert "45 techniques" in out.stderr and target.read_bytes().startswith(b"<?xml")
    assert out.stderr.startswith("✓ wrote the lineage")  # no blank line first (a spinner's leftover in a pipe)
    before = target.read_bytes()
    again = kg_cli("export", "lineage", "--root", "KDA", "-o", str(target), store=built_store_path)
    assert again.returncode == 1 and "already exists" in again.stderr and "--force" in again.stderr
    assert target.read_bytes() == before
    kg_cli("export", "lineage", "--root", "KDA", "-o", str(target), "--force", store=built_store_path, check=True)
    assert target.read_bytes() != before and b"Lineage of Kimi Delta Attention" in target.read_bytes()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_lineage_export_options_reach_the_file(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "kda.graphml"
    kg_cli("export", "lineage", "-f", "graphml", "--root", "KDA", "--direction", "up", "--depth", "1",
           "--with-papers", "-o", str(target), store=built_store_path, check=True)
    g = nx.read_graphml(target)
    names = {d["name"] for _, d in g.nodes(data=True) if d["kind"] == "technique"}
    assert names == {"Kimi Delta Attention", "Gated DeltaNet"}
    assert any(d["kind"] == "paper" for _, d in g.nodes(data=True))
    mermaid = kg_cli("export", "lineage", "-f", "mermaid", "--category", "moe", "-o", "-",
                     store=built_store_path, check=True)
    assert mermaid.stdout.startswith("flowchart LR") and "Switch Transformer" in mermaid.stdout
    assert "Gated DeltaNet" not in mermaid.stdout


def test_bad_output_paths_get_a_clear_error(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    cases = [
        (["-o", str(tmp_path / "missing" / "x.svg")], "does not exist"),
        (["-f", "svg", "-o", str(tmp_path / "x.png")], "ends in .png"),
        (["-f", "png", "-o", "-"], "binary"),
        (["-o", str(tmp_path / "x.unknown")], "cannot tell the format"),
        (["-f", "svg", "-o", str(tmp_path)], "is a directory"),
    ]
    for args, message in cases:
        proc = kg_cli("export", "lineage", *args, store=built_store_path)
        assert proc.returncode == 1 and message in proc.stderr, (args, proc.stderr)
        assert "hint:" in proc.stderr and "Traceback" not in proc.stderr


def test_rdf_export_writes_quads_and_refuses_private_graphs(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "graph.nq"
    kg_cli("export", "rdf", "-f", "nquads", "-o", str(target), store=built_store_path, check=True)
    graphs = {q.graph_name.value for q in ox.parse(target.read_bytes(), format=ox.RdfFormat.N_QUADS)}
    assert "https://w3id.org/techkg/graph/catalog" in graphs
    assert "https://w3id.org/techkg/graph/reading" not in graphs
    refused = kg_cli("export", "rdf", "-g", "reading", "-o", str(tmp_path / "r.ttl"), store=built_store_path)
    assert refused.returncode == 1 and "--include-private" in refused.stderr


def test_bibtex_export_keeps_its_keys_from_one_run_to_the_next(kg_cli, built_store_path: Path,
                                                              tmp_path: Path) -> None:
    first, second = tmp_path / "a.bib", tmp_path / "b.bib"
    kg_cli("export", "bibtex", "-o", str(first), store=built_store_path, check=True)
    kg_cli("export", "bibtex", "-o", str(second), store=built_store_path, check=True)
    keys = re.findall(r"^@\w+\{([^,]+),", first.read_text(), re.M)
    assert len(keys) > 40 and keys == re.findall(r"^@\w+\{([^,]+),", second.read_text(), re.M)
    lineage = tmp_path / "gdn.bib"
    kg_cli("export", "bibtex", "--lineage", "GDN", "-o", str(lineage), store=built_store_path, check=True)
    assert "@inproceedings{yang2024gated," in lineage.read_text()


def test_vendored_cytoscape_matches_its_recorded_checksum_and_licence() -> None:
    assets = Path(__file__).resolve().parents[2] / "exports" / "assets"
    script = (assets / "cytoscape.min.js").read_bytes()
    assert len(script) < 2 * 1024 * 1024
    assert hashlib.sha256(script).hexdigest() in (assets / "README.md").read_text()
    assert "Permission is hereby granted" in (assets / "LICENSE.cytoscape.txt").read_text()


def test_each_export_help_names_only_its_own_options(kg_cli) -> None:
    bibtex = kg_cli("export", "bibtex", "--help", env={"COLUMNS": "120"}, check=True).stdout
    assert "--lineage" in bibtex and "--root" not in bibtex and "With --lineage:" in bibtex
    lineage = kg_cli("export", "lineage", "--help", env={"COLUMNS": "120"}, check=True).stdout
    assert "--root" in lineage and "With --root:" in lineage
