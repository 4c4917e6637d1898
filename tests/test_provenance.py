"""``kg provenance``: each fact names the file it came from (the category's file, lineage.toml
for lineage, the kernel registry for the kernel), the link that states it where the checked
facts name one, and no source is a path of this installation (graph, exports, backups)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.conftest import ROOT


def _provenance(kg_cli, node: str, store: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads(kg_cli("provenance", node, "-f", "json", store=store, check=True).stdout)  # type: ignore[no-any-return]


def test_each_fact_names_the_file_it_was_read_from(kg_cli, built_store_path: Path) -> None:
    kg_cli("build", "--force", store=built_store_path, check=True)  # the CLI's build records the kernel registry
    rows = _provenance(kg_cli, "KDA", built_store_path)
    by_property: dict[str, set[str]] = {}
    for r in rows:
        by_property.setdefault(r["property"].rsplit("#", 1)[-1].rsplit("/", 1)[-1], set()).update(r["source"])
    assert by_property["refines"] == by_property["wasDerivedFrom"] == by_property["qualifiedDerivation"] \
        == {"kg/data/lineage.toml"}
    assert by_property["referenceKernel"] == {"kernels/registry.py"}
    assert by_property["prefLabel"] == by_property["date"] == {"kg/data/techniques/attention.toml"}


def test_a_fact_shows_the_link_that_states_it(kg_cli, built_store_path: Path) -> None:
    rows = _provenance(kg_cli, "GDN", built_store_path)
    stated = {r["property"].rsplit("/", 1)[-1].rsplit("#", 1)[-1]: r["stated_in"] for r in rows}
    assert stated["date"] == stated["combines"] == ["https://arxiv.org/abs/2412.06464"]
    assert stated["definition"] == []  # our own summary: no source states it
    table = kg_cli("provenance", "GDN", store=built_store_path, env={"COLUMNS": "80"}, check=True).stdout
    assert "https://arxiv.org/abs/2412.06464" in table and "lineage" in table


def test_provenance_reads_at_80_columns(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("provenance", "KDA", store=built_store_path, env={"COLUMNS": "80"}, check=True).stdout
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert len(lines) < 120
    assert "catalog · kg/data/lineage.toml · kg build" in out
    assert "tkg:refines" in out and "id:technique/gated-deltanet" in out


def test_no_source_is_a_path_of_this_installation(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    kg_cli("build", "--force", store=built_store_path, check=True)
    mine = tmp_path / "notes" / "my-list.md"
    mine.parent.mkdir()
    text = (ROOT / "kg" / "data" / "reading-list.md").read_text(encoding="utf-8")
    mine.write_text(text.replace("✅", "⬜", 1), encoding="utf-8")  # a list of one's own: one paper not read yet
    kg_cli("import", "reading-list", str(mine), "--accept-counts", store=built_store_path, check=True)
    export = tmp_path / "all.nq"
    kg_cli("export", "rdf", "--format", "nquads", "-o", str(export), store=built_store_path, check=True)
    backup = tmp_path / "backup.nq.gz"
    kg_cli("backup", "-o", str(backup), store=built_store_path, check=True)
    graph = kg_cli("sparql", "SELECT ?s WHERE { GRAPH ?g { { ?s ?p ?o } UNION { ?x ?p ?s } } "
                   "FILTER(isIRI(?s) && STRSTARTS(STR(?s), 'file:')) }", "-f", "csv",
                   store=built_store_path, check=True).stdout
    for text in (export.read_text(encoding="utf-8"), gzip.decompress(backup.read_bytes()).decode(), graph):
        assert "file:/" not in text and str(ROOT) not in text and str(tmp_path) not in text
    listed = json.loads(kg_cli("graph", "list", "-f", "json", store=built_store_path, check=True).stdout)
    sources = {g["graph"]: g["source"] for g in listed}
    assert "https://w3id.org/techkg/source/kg/data/lineage.toml" in sources["catalog"]
    assert sources["reading-list"] == "urn:techkg:file:my-list.md"
