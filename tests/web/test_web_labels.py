"""A technique without an English label (one an import brings, named only in German, or
not named at all) is shown by another label or its id: kg show, kg compare and the
workbench's pages answer instead of crashing."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from kg.store.embedded import OxigraphStore

TECHNIQUES = """\
@prefix tkg: <https://w3id.org/techkg/ns#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
<https://w3id.org/techkg/id/technique/wurst> a tkg:Technique ; skos:notation "wurst" ;
    skos:prefLabel "Wurstaufmerksamkeit"@de .
<https://w3id.org/techkg/id/technique/nameless> a tkg:Technique ; skos:notation "nameless" .
"""


@pytest.fixture
def store_with_foreign_names(kg_cli, built_store_path: Path, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    extra = tmp_path / "foreign.ttl"
    extra.write_text(TECHNIQUES, encoding="utf-8")
    kg_cli("import", "rdf", str(extra), "--graph", "foreign", store=built_store_path, check=True)
    return built_store_path


def test_kg_show_and_compare_name_a_technique_without_an_english_label(
        kg_cli, store_with_foreign_names: Path) -> None:  # type: ignore[no-untyped-def]
    shown = kg_cli("show", "wurst", store=store_with_foreign_names)
    assert shown.returncode == 0, shown.stderr
    assert "Wurstaufmerksamkeit" in shown.stdout and "Traceback" not in shown.stderr
    nameless = kg_cli("show", "nameless", store=store_with_foreign_names)
    assert nameless.returncode == 0 and "nameless" in nameless.stdout, nameless.stderr
    compared = kg_cli("compare", "wurst", "nameless", "KDA", store=store_with_foreign_names)
    assert compared.returncode == 0, compared.stderr
    assert "Wurstaufmerksamkeit" in compared.stdout and "Kimi Delta Attention" in compared.stdout


def test_the_workbench_shows_and_compares_a_technique_without_an_english_label(
        store_with_foreign_names: Path, workbench) -> None:  # type: ignore[no-untyped-def]
    store = OxigraphStore(store_with_foreign_names)
    try:
        with workbench(store) as base, httpx.Client(base_url=base) as client:
            compared = client.get("/compare", params=[("t", "wurst"), ("t", "nameless"), ("t", "kda")])
            assert compared.status_code == 200, compared.text[:300]
            assert "Wurstaufmerksamkeit" in compared.text and "Kimi Delta Attention" in compared.text
            page = client.get("/techniques/wurst")
            assert page.status_code == 200 and "Wurstaufmerksamkeit" in page.text
            assert client.get("/techniques/nameless").status_code == 200
            assert client.get("/compare.md", params=[("t", "wurst"), ("t", "kda")]).status_code == 200
            for path in ("/", "/?q=wurst"):
                assert client.get(path).status_code == 200, path
    finally:
        store.close()
