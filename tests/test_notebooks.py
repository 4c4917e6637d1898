"""The notebooks are committed with their outputs (tables, charts, lineage pictures) so
they read on a repository page, within a size budget; the tour runs top to bottom against
a fresh store (each area's tests run its own notebook)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
#: Largest committed notebook, outputs included (make notebooks refuses to write a larger one).
MAX_KB = 400
#: What a notebook must show, beyond printed tables: its charts and pictures.
PICTURES = {"05-analytics.ipynb": "image/png", "06-lineage.ipynb": "image/svg+xml", "01-tour.ipynb": "text/markdown",
            "08-own-techniques.ipynb": "image/svg+xml"}


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_are_committed_with_their_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    with_outputs = [cell for cell in code if cell.get("outputs")]
    assert len(with_outputs) >= len(code) / 2, f"{path.name}: run make notebooks and commit the result"
    outputs = [out for cell in code for out in cell.get("outputs", [])]
    assert not [out for out in outputs if out.get("output_type") == "error"]
    if path.name in PICTURES:
        assert any(PICTURES[path.name] in out.get("data", {}) for out in outputs), f"{path.name} lost its pictures"
    assert path.stat().st_size <= MAX_KB * 1024, f"{path.name} is {path.stat().st_size // 1024} KB"
    counts = [cell.get("execution_count") for cell in with_outputs]
    assert all(isinstance(n, int) for n in counts) and counts == sorted(counts)  # run top to bottom, in one go


def test_make_notebooks_reruns_them() -> None:
    makefile = (NOTEBOOKS.parent / "Makefile").read_text()
    assert "notebooks:" in makefile and "scripts/run-notebooks" in makefile
    assert (NOTEBOOKS.parent / "scripts" / "run-notebooks").stat().st_mode & 0o111


def test_tour_notebook_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOKS / "01-tour.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = "".join(
        out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
        for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
    )
    assert "39 techniques" in outputs and "0 SHACL violations" in outputs
    assert "Gated DeltaNet" in outputs and "'read': 8" in outputs
