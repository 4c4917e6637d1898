"""notebooks/03-zotero-sync.ipynb runs top to bottom against the emulator."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "03-zotero-sync.ipynb"


def test_zotero_sync_notebook_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "".join(out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
                   for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", []))
    assert "53 items created" in text and "library version after the dry run: 0" in text
    assert "kept zotero - lost: reading" in text and "ZeRO in the graph: read" in text
    assert "recoveries: 1 | conflicts: []" in text and "53 items, recoveries: 1 duplicates: []" in text
