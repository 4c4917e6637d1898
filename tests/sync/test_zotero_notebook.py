"""notebooks/03-zotero-sync.ipynb runs top to bottom against the emulator."""

from __future__ import annotations

from pathlib import Path

from tests.notebooks import executed, printed


def test_zotero_sync_notebook_executes(tmp_path: Path) -> None:
    text = printed(executed("03-zotero-sync.ipynb", tmp_path))
    assert "53 items created" in text and "library version after the dry run: 0" in text
    assert "kept zotero - lost: reading" in text and "ZeRO in the graph: read" in text
    assert "recoveries: 1 | conflicts: []" in text and "53 items, recoveries: 1 duplicates: []" in text
