"""The tour notebook runs top to bottom against a fresh store."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def test_tour_notebook_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOKS / "01-tour.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = "".join(
        out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
        for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
    )
    assert "39 techniques" in outputs and "0 SHACL violations" in outputs
    assert "Gated DeltaNet" in outputs and "'read': 8" in outputs
