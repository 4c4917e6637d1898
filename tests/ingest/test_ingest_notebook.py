"""notebooks/02-ingest.ipynb runs top to bottom against the replay server."""

from __future__ import annotations

from pathlib import Path

from tests.notebooks import executed, printed


def test_the_ingest_notebook_executes(tmp_path: Path) -> None:
    text = printed(executed("02-ingest.ipynb", tmp_path, timeout=120))
    assert "'added': 3" in text and "missing: ['0808.05394']" in text and "requests: 1" in text
    assert "Heat-bath random walks with Markov bases" in text and "candidates: 10" in text
    assert "4 answered 304, 0 bodies" in text and "protoncoin/protoncoin was renamed to padima2/protoncoin" in text
    assert "kg ingest github" in text and "kg ingest arxiv" in text
