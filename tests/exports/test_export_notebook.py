"""notebooks/06-lineage.ipynb runs top to bottom and shows the lineage inline."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "06-lineage.ipynb"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_lineage_notebook_executes_and_draws_the_lineage(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    svgs = [o for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert len(svgs) == 2 and "Kimi Delta Attention" in svgs[1]["data"]["image/svg+xml"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "45 techniques, 28 typed lineage relations" in text and "flowchart LR" in text
    assert "nodes and" in text
