"""Every write that brings papers links what it added or changed, in a transaction of its
own after the source's: kg ingest arxiv (a replay server), kg import rdf and a
reading-list import (kg ingest citations: tests/citations/test_citation_links.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.ingest import ATOM_NS
from tests.ingest.replay import ReplayServer


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


def _entry(ident: str, title: str, summary: str, category: str = "cs.CL") -> bytes:
    return (f"<entry {ATOM_NS}><id>http://arxiv.org/abs/{ident}v1</id>"
            f"<updated>2024-01-02T12:00:00Z</updated><published>2024-01-02T12:00:00Z</published>"
            f"<title>{title}</title><summary>{summary}</summary><author><name>Ada Reader</name></author>"
            f'<category term="{category}" scheme="http://arxiv.org/schemas/atom"/>'
            f'<arxiv:primary_category term="{category}"/></entry>').encode()


def _links(kg_cli, store: Path, *args: str) -> list[dict]:
    return json.loads(kg_cli("links", *args, "-f", "json", store=store, check=True).stdout)


def test_kg_ingest_arxiv_links_the_papers_it_added_and_keeps_their_abstracts(kg_cli, replay, built_store_path) -> None:
    replay.add_arxiv_entries({
        "2401.00001": _entry("2401.00001", "Faster decoding for chat models",
                             "We adopt grouped-query attention (GQA) in every layer and train with the Muon "
                             "optimizer."),
        "2401.00002": _entry("2401.00002", "Write amplification on flash",
                             "We cut write amplification of NVMe SSD arrays.", "cs.DB"),
    })
    kg_cli("link", store=built_store_path, check=True)
    out = kg_cli("ingest", "arxiv", "2401.00001", "2401.00002", "--api-url", replay.arxiv_url, "--delay", "0",
                 store=built_store_path, check=True)
    assert "linked 2 changed papers" in out.stderr
    rows = {(r["technique_name"], r["relation"]) for r in _links(kg_cli, built_store_path, "2401.00001")}
    assert rows == {("Grouped-Query Attention", "uses"), ("Muon (scaled for LLM training)", "uses")}
    gqa = _links(kg_cli, built_store_path, "2401.00001", "-r", "uses")[0]
    assert any(e["field"] == "abstract" and e["source"] == "arxiv" for e in gqa["evidence"])
    assert _links(kg_cli, built_store_path, "2401.00002") == []  # SSD storage is not Mamba2
    abstract = kg_cli("sparql", "SELECT ?a WHERE { <https://arxiv.org/abs/2401.00001> dcterms:abstract ?a }",
                      "-f", "csv", store=built_store_path, check=True).stdout
    assert "grouped-query attention" in abstract


def test_kg_import_rdf_links_what_it_brings_unless_told_not_to(kg_cli, built_store_path, tmp_path) -> None:
    dump = tmp_path / "papers.nt"
    dump.write_text(
        '<https://example.org/p/1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> '
        '<http://purl.org/ontology/bibo/Document> .\n'
        '<https://example.org/p/1> <http://purl.org/dc/terms/title> "Serving LLMs with PagedAttention" .\n',
        encoding="utf-8")
    kg_cli("import", "rdf", str(dump), "--graph", "quiet", "--no-link", store=built_store_path, check=True)
    assert _links(kg_cli, built_store_path, "https://example.org/p/1") == []
    out = kg_cli("import", "rdf", str(dump), "--graph", "loud", store=built_store_path, check=True)
    assert "linked" in out.stderr
    rows = _links(kg_cli, built_store_path, "https://example.org/p/1")
    assert [(r["technique_name"], r["relation"]) for r in rows] == [("PagedAttention / vLLM", "uses")]


def test_a_reading_list_import_links_the_papers_whose_texts_changed(kg_cli, built_store_path, tmp_path) -> None:
    from tests.store.lists import my_list

    kg_cli("link", store=built_store_path, check=True)
    mine = my_list(tmp_path / "my.md", read=9, drop=0)
    text = mine.read_text(encoding="utf-8").replace("Splits a model into stages",
                                                    "Splits a model trained with ZeRO-3 into stages")
    assert "with ZeRO-3" in text
    mine.write_text(text, encoding="utf-8")
    out = kg_cli("import", "reading-list", str(mine), store=built_store_path, check=True)
    assert "linked 1 changed papers" in out.stderr
    rows = _links(kg_cli, built_store_path, "GPipe")
    assert [(r["technique_name"], r["relation"]) for r in rows] == [("DeepSpeed ZeRO", "uses")]
