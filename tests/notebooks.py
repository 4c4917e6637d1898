"""Running a notebook from ``notebooks/`` top to bottom, as each area's notebook test does."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

__all__ = ["NOTEBOOKS", "executed", "printed"]

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def executed(name: str, workdir: Path, *, timeout: int = 300) -> nbformat.NotebookNode:
    """The notebook ``name`` after a fresh Python kernel ran every cell in ``workdir``."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def printed(nb: nbformat.NotebookNode) -> str:
    """Everything the code cells printed or showed as plain text, in order."""
    return "".join(out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
                   for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", []))
