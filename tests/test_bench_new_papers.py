"""The new papers that ``bench scale`` imports are what a later arXiv ingest brings: papers the
store does not hold, naming the authors, techniques and categories it does hold."""

from __future__ import annotations

from pathlib import Path

from bench.corpus import BASE, generate
from bench.scale import new_papers


def test_new_papers_are_the_papers_own_facts_and_their_authors_names_and_nothing_the_store_holds(
        tmp_path: Path) -> None:
    drawn = generate(200, seed=46, out=tmp_path / "drawn.nt").path.read_text(encoding="utf-8")
    own, whole = new_papers(drawn)
    lines = own.splitlines()
    subjects = {line.split(" ", 1)[0] for line in lines}
    assert lines and all(s.startswith((f"<{BASE}paper/new-", f"<{BASE}person/")) for s in subjects)
    people = [line for line in lines if line.startswith(f"<{BASE}person/")]
    assert people and all(("foaf/0.1/name>" in p) or ("#type>" in p) for p in people)  # no affiliation
    assert f"<{BASE}paper/new-" in own and f"<{BASE}paper/0>" not in own  # papers of their own
    assert f"{BASE}technique/" in own  # ... naming techniques the store has
    # the whole file also draws again what the papers name
    assert set(lines) < set(whole.splitlines()) and f"<{BASE}technique/0> " in whole
