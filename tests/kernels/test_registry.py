"""The registry covers the catalog, points at real folders, and stays free of torch."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from kernels.registry import entries, entry

ROOT = Path(__file__).resolve().parents[2]


def test_every_catalog_technique_has_an_entry_and_every_entry_a_technique() -> None:
    from kg.catalog import load_catalog

    catalog = load_catalog()
    registered = {e.technique for e in entries()}
    assert registered == set(catalog.techniques)  # the page's 39 and their lineage-only parents
    assert len({e.technique for e in entries()}) == len(entries()), "a technique is registered twice"


def test_at_least_32_on_page_techniques_have_code() -> None:
    from kg.catalog import load_catalog

    catalog = load_catalog()
    with_code = [e for e in entries() if e.has_code and catalog.techniques[e.technique].on_page]
    assert len(with_code) >= 32


@pytest.mark.parametrize("item", [e for e in entries() if e.has_code], ids=lambda e: e.technique)
def test_each_kernel_folder_has_a_naive_form_and_a_matching_declaration(item) -> None:
    folder = ROOT / item.module.replace(".", "/")
    assert (folder / "naive.py").is_file(), f"{folder} has no naive.py"
    declared_files = ("__init__.py", "naive.py", "verification.py", "mutants.py")
    others = [p.name for p in folder.glob("*.py") if p.name not in declared_files]
    assert others, f"{folder} has no structured form beside naive.py"
    declared = importlib.import_module(item.module + ".verification").VERIFICATION
    assert declared.technique == item.technique
    assert declared.compares and declared.shapes and declared.checks
    assert all(c.claim and c.tolerance >= 0 for c in declared.checks)
    if declared.gradients:
        assert any(c.gradients for c in declared.checks), "declares gradients but no check compares them"


def test_unknown_technique_suggests_registered_ids() -> None:
    from kg.errors import KernelError

    with pytest.raises(KernelError) as err:
        entry("gated-deltanett")
    assert "gated-deltanet" in err.value.hint


def test_importing_the_registry_does_not_import_torch() -> None:
    code = "import sys, kernels, kernels.registry; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
