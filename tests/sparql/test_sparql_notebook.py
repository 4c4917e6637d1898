"""notebooks/04-sparql.ipynb runs top to bottom: named queries, an ad-hoc query, HTTP."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04-sparql.ipynb"


def test_the_sparql_notebook_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs)
    assert "39 techniques" in text and "read in total: 8" in text
    assert "Kimi Delta Attention  refines   Gated DeltaNet" in text
    assert "techniques over HTTP: 39" in text and "Grouped-Query Attention" in text
    assert "done" in text
