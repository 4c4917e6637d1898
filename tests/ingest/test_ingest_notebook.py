"""notebooks/02-ingest.ipynb runs top to bottom against the replay server."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "02-ingest.ipynb"


def test_the_ingest_notebook_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "".join(out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
                   for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", []))
    assert "'added': 3" in text and "missing: ['0808.05394']" in text and "requests: 1" in text
    assert "Heat-bath random walks with Markov bases" in text and "candidates: 10" in text
    assert "4 answered 304, 0 bodies" in text and "protoncoin/protoncoin was renamed to padima2/protoncoin" in text
    assert "kg ingest github" in text and "kg ingest arxiv" in text
