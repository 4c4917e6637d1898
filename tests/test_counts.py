"""One definition of each count (kg/counts.py), the same on every surface: ``kg build`` and
``kg stats`` (table and JSON), ``kg reading list``, ``kg export bibtex`` and the workbench's
reading page, after papers were added to the list one by one."""

from __future__ import annotations

import json
import re
from pathlib import Path


def _json(kg_cli, *args: str, store: Path) -> object:
    return json.loads(kg_cli(*args, "-f", "json", store=store, check=True).stdout)


def test_every_surface_counts_the_reading_list_and_the_papers_alike(kg_cli, built_store_path: Path,
                                                                    tmp_path: Path) -> None:
    from kg.server.web.models import reading_page
    from kg.store.embedded import OxigraphStore

    store = built_store_path
    kg_cli("reading", "set", "2501.00001", "read", "--add", store=store, check=True)
    kg_cli("reading", "set", "2502.00002", "to-read", "--add", store=store, check=True)
    kg_cli("reading", "set", "My own notes on MoE", "to-read", "--add", store=store, check=True)
    papers, read = 53 + 3, 8 + 1

    built = _json(kg_cli, "build", store=store)
    assert built["reading_list"] | {"source": None} == {  # type: ignore[index]
        "source": None, "entries": papers, "read": read, "to_read": papers - read, "with_note": 5,
        "categories": 9, "listed": 53, "added": 3}
    assert built["papers"] == 89 and built["catalog_papers"] == 86  # type: ignore[index]
    table = " ".join(kg_cli("build", store=store, env={"COLUMNS": "80"}, check=True).stdout.split())
    assert f"reading list {papers} papers: {read} read, {papers - read} to read" in table
    assert "(53 from reading-list.md, 3 added one by one)" in table
    assert "papers 89: 86 of the catalog's bibliography, 3 from your list and sources" in table

    stats = _json(kg_cli, "stats", store=store)
    assert stats["counts"]["papers"] == 89 and stats["counts"]["reading_list"] == papers  # type: ignore[index]
    assert sum(stats["reading"].values()) == papers and stats["reading"]["read"] == read  # type: ignore[index]
    assert stats["reading_list"]["uncategorised"] == 3  # type: ignore[index]
    stats_table = kg_cli("stats", store=store, check=True).stdout
    assert f"Reading status of the {papers} papers on the reading list" in stats_table
    assert re.search(rf"^read\s+{read}$", stats_table, re.MULTILINE)

    listed = _json(kg_cli, "reading", "list", store=store)
    assert len(listed) == papers and sum(r["status"] == "read" for r in listed) == read  # type: ignore[union-attr,index]
    assert f"Reading list: {papers} papers" in kg_cli("reading", "list", store=store, check=True).stdout

    bib = tmp_path / "list.bib"
    kg_cli("export", "bibtex", "-o", str(bib), store=store, check=True)
    assert len(re.findall(r"^@", bib.read_text(encoding="utf-8"), re.MULTILINE)) == papers

    with OxigraphStore.open_reader(store) as reader:
        for analytics in (False, True):
            if analytics:
                kg_cli("analytics", "build", store=store, check=True)
            page = reading_page(reader, analytics=analytics)
            assert page["total"] == papers and page["read"] == read
            groups = {g.name: g for g in page["categories"]}
            loose = groups["Not in a category"]
            assert (loose.total, loose.counts["read"], len(loose.papers)) == (3, 1, 3)
            assert sum(g.counts["read"] for g in groups.values() if g.name != "Not in a category") >= read - 1
            assert list(groups)[-1] == "Not in a category"


def test_a_malformed_arxiv_id_is_refused_not_added_as_an_untitled_paper(kg_cli, built_store_path: Path) -> None:
    before = _json(kg_cli, "stats", store=built_store_path)["reading_list"]  # type: ignore[index]
    for typo in ("2501.0000x", "arXiv:2501.1", "2501.00001vx"):
        out = kg_cli("reading", "set", typo, "read", "--add", store=built_store_path)
        assert out.returncode == 1 and "is not an arXiv identifier" in out.stderr and "Nothing was added" in out.stderr
    assert _json(kg_cli, "stats", store=built_store_path)["reading_list"] == before  # type: ignore[index]


def test_a_paper_is_named_by_its_title_or_its_id_never_by_its_iri(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    added = kg_cli("reading", "set", "2501.00001", "read", "--add", store=store, check=True).stdout
    assert added.startswith("arXiv:2501.00001: no status → read") and "https://" not in added
    known = kg_cli("reading", "set", "GPipe", "read", store=store, check=True).stdout
    assert known.startswith("GPipe: Efficient Training of Giant Neural Networks") and "https://" not in known
    table = kg_cli("reading", "list", "--status", "read", store=store, check=True).stdout
    assert "arXiv:2501.00001" in table and "https://arxiv.org/abs/2501.00001" not in table
