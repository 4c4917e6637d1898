"""A lineage edge that no source states (``basis = "inferred"`` in lineage.toml) says so
wherever it is shown: ``kg lineage`` (tree, table, CSV, JSON), ``kg show`` and ``kg compare``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path


def test_kg_lineage_labels_inferred_edges(kg_cli, built_store_path: Path) -> None:
    tree = kg_cli("lineage", "Stable LatentMoE", store=built_store_path, check=True).stdout
    assert "LatentMoE (refines, inferred)" in tree
    table = kg_cli("lineage", "KDA", "-f", "table", store=built_store_path, check=True).stdout
    assert "inferred" not in table  # stated edges carry no mark
    rows = list(csv.DictReader(io.StringIO(
        kg_cli("lineage", "Stable LatentMoE", "-f", "csv", store=built_store_path, check=True).stdout)))
    assert [(r["technique"], r["relation"], r["basis"]) for r in rows][:1] == [("LatentMoE", "refines", "inferred")]
    data = json.loads(kg_cli("lineage", "Stable LatentMoE", "-f", "json", store=built_store_path, check=True).stdout)
    assert data["ancestors"][0]["basis"] == "inferred"


def test_kg_show_and_kg_compare_label_inferred_edges(kg_cli, built_store_path: Path) -> None:
    card = kg_cli("show", "Stable LatentMoE", store=built_store_path, env={"COLUMNS": "80"}, check=True).stdout
    assert "derives from LatentMoE (refines, inferred)" in " ".join(card.split())
    rows = list(csv.DictReader(io.StringIO(
        kg_cli("show", "Stable LatentMoE", "-f", "csv", store=built_store_path, check=True).stdout)))
    assert {"field": "derives from", "value": "LatentMoE (refines, inferred)"} in rows
    compared = json.loads(kg_cli("compare", "LatentMoE", "Stable LatentMoE", "-f", "json",
                                 store=built_store_path, check=True).stdout)
    lineage = dict(compared["rows"])["Lineage between them"]
    assert lineage == ["—", "refines LatentMoE (inferred)"]
    stated = json.loads(kg_cli("compare", "GDN", "KDA", "-f", "json", store=built_store_path, check=True).stdout)
    assert dict(stated["rows"])["Lineage between them"] == ["—", "refines Gated DeltaNet"]
