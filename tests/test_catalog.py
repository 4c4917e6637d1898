"""The 39-technique catalog: completeness, lineage, unknowns, and precise errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.catalog import load_catalog
from kg.errors import CatalogError

REQUIRED_EDGES = [
    ("gated-deltanet", "kda"), ("latentmoe", "stable-latentmoe"), ("transformer", "mqa"),
    ("mqa", "gqa"), ("transformer", "mla"), ("mla", "dsa"), ("dsa", "deepseek-v4-csa-hca"),
    ("switch-transformer", "expert-choice"), ("switch-transformer", "aux-loss-free-balancing"),
    ("zero", "fsdp1"), ("fsdp1", "fsdp2"), ("fsdp2", "vescale-fsdp"), ("grpo", "dancegrpo"),
    ("triton", "triton-ascend"), ("triton", "liger-kernel"), ("eplb", "ultraep"), ("ppo", "grpo"),
]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_catalog_has_the_39_techniques_of_the_page_in_9_categories(catalog) -> None:
    on_page = catalog.on_page()
    assert len(on_page) == 39
    assert len(catalog.categories) == 9
    assert {t.category for t in on_page} == set(catalog.categories)


def test_every_required_lineage_edge_is_present_with_a_relation(catalog) -> None:
    edges = {(e.parent, e.child): e.relation for e in catalog.edges}
    for parent, child in REQUIRED_EDGES:
        assert (parent, child) in edges, f"missing lineage edge {parent} -> {child}"
    assert edges[("gated-deltanet", "kda")] == "refines"
    assert edges[("triton", "triton-ascend")] == "portsTo"
    assert edges[("switch-transformer", "expert-choice")] == "inverts"


def test_lineage_only_parents_are_nodes_marked_off_page(catalog) -> None:
    for parent in ("deltanet", "mamba2", "ppo", "eagle"):
        assert parent in catalog.techniques
        assert catalog.techniques[parent].on_page is False


def test_unknown_facts_stay_unknown(catalog) -> None:
    mqa = catalog.techniques["mqa"]
    assert mqa.repository is None and mqa.organisations == []
    assert catalog.papers["deepseek-v4"].arxiv is None  # 2606.19348 is unverified
    assert catalog.papers["deepseek-v3.2-exp"].arxiv is None


def test_on_page_techniques_have_star_and_dimensions(catalog) -> None:
    for tech in catalog.on_page():
        assert set(tech.star) == {"situation", "target", "action", "result"}, tech.id
        assert len(tech.dimensions) == 7, tech.id
        assert tech.headline.get("result"), tech.id
        if tech.headline.get("conditional"):
            assert tech.headline.get("conditions"), tech.id


def test_chinese_labels_are_kept_beside_english(catalog) -> None:
    assert catalog.categories["optimizers"].label_zh == "优化器"
    assert catalog.techniques["switch-transformer"].label_zh


def _rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_toml_syntax_error_names_file_and_line(catalog_copy: Path) -> None:
    target = catalog_copy / "techniques" / "optimizers.toml"
    _rewrite(target, 'id = "muon"', 'id = "muon')
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert "optimizers.toml:" in str(err.value)
    assert err.value.line is not None


def test_unknown_key_is_reported_with_its_line_and_the_allowed_keys(catalog_copy: Path) -> None:
    target = catalog_copy / "techniques" / "optimizers.toml"
    _rewrite(target, 'id = "muon"', 'id = "muon"\nsumary = "typo"')
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    lines = target.read_text().splitlines()
    assert err.value.line is not None and lines[err.value.line - 1].startswith("sumary")
    assert "sumary" in str(err.value) and "summary" in err.value.hint


def test_lineage_edge_to_unknown_technique_suggests_the_closest_id(catalog_copy: Path) -> None:
    _rewrite(catalog_copy / "lineage.toml", 'child = "kda"', 'child = "kdaa"')
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert "lineage.toml" in str(err.value) and "'kdaa'" in str(err.value)
    assert "kda" in err.value.hint


def test_bad_date_and_missing_star_field_are_reported(catalog_copy: Path) -> None:
    target = catalog_copy / "techniques" / "optimizers.toml"
    original = target.read_text()
    date_line = next(line for line in original.splitlines() if line.startswith("date ="))
    _rewrite(target, date_line, 'date = "Feb 2025"')
    with pytest.raises(CatalogError, match="YYYY-MM-DD"):
        load_catalog(catalog_copy)
    target.write_text(original)
    situation = next(line for line in original.splitlines() if line.startswith("situation ="))
    _rewrite(target, situation, "")
    with pytest.raises(CatalogError, match="situation"):
        load_catalog(catalog_copy)


def test_paper_key_that_does_not_exist_is_reported(catalog_copy: Path) -> None:
    _rewrite(catalog_copy / "techniques" / "optimizers.toml", 'paper = "muon-is-scalable"', 'paper = "muon"')
    with pytest.raises(CatalogError, match="not a key in papers.toml"):
        load_catalog(catalog_copy)
