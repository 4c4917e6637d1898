"""notebooks/06-lineage.ipynb runs top to bottom and shows the lineage inline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.notebooks import executed


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_lineage_notebook_executes_and_draws_the_lineage(tmp_path: Path) -> None:
    nb = executed("06-lineage.ipynb", tmp_path, timeout=180)
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    svgs = [o for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert len(svgs) == 2 and "Kimi Delta Attention" in svgs[1]["data"]["image/svg+xml"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "45 techniques, 28 typed lineage relations" in text and "flowchart LR" in text
    assert "nodes and" in text
