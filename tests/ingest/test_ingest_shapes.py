"""What the ingesters write conforms to kg/shapes.ttl, and uses only documented terms."""

from __future__ import annotations

import re
from pathlib import Path

from ingest.arxiv import ingest_arxiv
from ingest.github import ingest_github


def test_ingested_papers_and_repositories_conform_to_the_shapes(built_store, arxiv_source, github_rest,
                                                                 replay) -> None:
    from kg.validate import validate_store

    ingest_arxiv(built_store, arxiv_source, ids=["1605.08386", "2202.12139", "cs/0503050", "2104.12255v1"])
    ingest_arxiv(built_store, arxiv_source, query="testing", max_results=10)
    ingest_github(built_store, github_rest, repos=["PyGithub/PyGithub", "protoncoin/protoncoin"])
    replay.use_version("/repos/PyGithub/PyGithub", 1)
    ingest_github(built_store, github_rest, repos=["PyGithub/PyGithub"], contributors=True)
    assert validate_store(built_store) == []
    assert len(built_store.select("SELECT ?s WHERE { ?s a tkg:RepositorySnapshot }")) == 3


def test_every_tkg_term_the_ingesters_use_is_in_the_ontology() -> None:
    from kg.validate import ontology_text

    root = Path(__file__).resolve().parents[2] / "ingest"
    used = set()
    for path in (root / f"{name}.py" for name in ("arxiv", "oai", "github", "merge", "http", "cache")):
        used |= set(re.findall(r"\bTKG\.(\w+)", path.read_text(encoding="utf-8")))
        used |= set(re.findall(r"\btkg:(\w+)", path.read_text(encoding="utf-8")))
    used |= {"requests", "added", "updated", "unchanged", "missing", "failed"}  # activity stats
    documented = set(re.findall(r"^tkg:(\w+) a ", ontology_text(), flags=re.M))
    assert used and used <= documented, sorted(used - documented)
