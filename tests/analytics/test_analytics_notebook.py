"""notebooks/05-analytics.ipynb runs top to bottom on an analytics file and shows its charts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05-analytics.ipynb"


def test_the_analytics_notebook_runs_and_draws_its_charts(
    analysed_store_path: Path, db_of: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbformat
    from nbclient import NotebookClient

    from kg.analytics import connect

    db = db_of(analysed_store_path)
    monkeypatch.setenv("KG_STORE", str(analysed_store_path))
    monkeypatch.setenv("KG_ANALYTICS_DB", str(db))
    committed = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        committed,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    outputs = [
        out
        for cell in committed.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    ]
    text = "".join(
        out.get("text", "") + str(out.get("data", {}).get("text/plain", "")) for out in outputs
    )
    assert not [out for out in outputs if out.get("output_type") == "error"]
    assert sum("image/png" in out.get("data", {}) for out in outputs) == 4
    con = connect(db, read_only=True)
    try:
        read = con.execute(
            "SELECT count(*) FROM reading_state WHERE read_at IS NOT NULL"
        ).fetchall()[0][0]
    finally:
        con.close()
    assert f"papers read in total: {read}" in text
    assert str(db) in text and "building it from the graph" not in text
    assert "Gated DeltaNet" in text and "Synthetic technique" in text
