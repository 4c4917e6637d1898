"""A killed ``kg link`` leaves the links as they were (or, once the replacement is
journalled, as they became, completed by the next command), never half-written."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.graphs import LINKS
from kg.store.base import content_hash
from kg.store.embedded import OxigraphStore
from tests.store.processes import kill_at


def _links(store_path: Path) -> str:
    with OxigraphStore.open_reader(store_path) as store:
        return content_hash(store.triples(LINKS))


def _change(kg_cli, store: Path) -> None:
    """A change kg link picks up: a paper of the reader's own that names a technique."""
    kg_cli("reading", "set", "2501.99999", "to-read", "--add", store=store, check=True)
    dump = store.parent / f"{store.name}-paper.nt"
    dump.write_text('<https://arxiv.org/abs/2501.99999> <http://purl.org/dc/terms/title> '
                    '"Decoding with grouped-query attention" .\n', encoding="utf-8")
    kg_cli("import", "rdf", str(dump), "--graph", "extra", "--no-link", store=store, check=True)


def test_kg_link_killed_before_it_loads_leaves_no_links_on_a_store_that_had_none(kg_cli, built_store_path) -> None:
    before = _links(built_store_path)
    kill_at("link.before-load", "link", store=built_store_path)
    assert _links(built_store_path) == before
    kill_at("store.loaded", "link", store=built_store_path)  # the graph loaded, its provenance not yet written
    kg_cli("--wait", "0", "reading", "set", "GPipe", "read", store=built_store_path, check=True)
    assert _links(built_store_path) == before
    kg_cli("link", store=built_store_path, check=True)
    assert _links(built_store_path) != before


@pytest.mark.parametrize("point, outcome", [("link.before-load", "old"), ("store.journalled", "new")])
def test_kg_link_killed_while_it_replaces_the_links_leaves_them_old_or_new(kg_cli, built_store_path, tmp_path,
                                                                           point: str, outcome: str) -> None:
    import shutil

    kg_cli("link", store=built_store_path, check=True)
    _change(kg_cli, built_store_path)
    whole = tmp_path / "whole"
    shutil.copytree(built_store_path, whole)
    old = _links(built_store_path)
    kg_cli("link", store=whole, check=True)
    new = _links(whole)
    assert old != new
    kill_at(point, "link", store=built_store_path)
    nxt = kg_cli("--wait", "0", "reading", "set", "GPipe", "read", store=built_store_path, check=True)
    assert "recovering" in nxt.stderr
    assert _links(built_store_path) == (old if outcome == "old" else new)


def test_the_work_files_of_a_killed_kg_link_are_removed_by_the_next_one(kg_cli, built_store_path, tmp_path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    kill_at("link.before-load", "link", store=built_store_path, env=env)
    left = list(scratch.glob("techkg-links-*"))
    assert len(left) == 1 and (left[0] / "links.nt").stat().st_size > 0
    kg_cli("link", store=built_store_path, env=env, check=True)
    assert list(scratch.iterdir()) == []
