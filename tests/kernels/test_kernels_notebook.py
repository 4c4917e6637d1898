"""notebooks/07-kernels.ipynb runs top to bottom and shows the verifications and the plot."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "07-kernels.ipynb"


def test_kernels_notebook_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "\n".join(
        out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )
    assert "gated-deltanet" in text and "passed" in text and "FAILED" not in text
    assert re.search(r"^gated-deltanet +verified$", text, re.M) and re.search(r"^ascend-c +none$", text, re.M)
    assert "max |o_rec - o_chunk|" in text
    assert re.search(r"strong-decay .* FAIL", text) and re.search(r"(\d+) of \1 mutants killed", text)
    images = [out for cell in nb.cells for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]
    assert images, "the GDN comparison plot was not drawn"
