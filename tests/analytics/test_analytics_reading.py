"""The workbench's reading page from fresh analytics tables: the same page as from the
store (counts, categories in list order, the papers each shows and how many more)."""

from __future__ import annotations

import pytest

from kg.server.web import models


def _page(page: dict) -> dict:
    return {
        **{k: page[k] for k in ("all_categories", "statuses", "total", "read", "history")},
        "counts": dict(page["counts"]),
        "categories": [(c.name, c.total, c.counts, c.more, [str(p["paper"]) for p in c.papers])
                       for c in page["categories"]],
    }


@pytest.mark.parametrize(("status", "category"),
                         [("", ""), ("read", ""), ("", "distributed"), ("to-read", "Attention"), ("", "no such")])
def test_the_reading_page_from_fresh_tables_is_the_page_the_store_gives(analysed_store, monkeypatch, status: str,
                                                                        category: str) -> None:
    # a small corpus: fewer papers per category, so that some have more than they show
    monkeypatch.setattr(models, "PAPERS_PER_CATEGORY", 4)
    monkeypatch.setattr(models, "PAPERS_IN_ONE_CATEGORY", 9)
    from_store = _page(models.reading_page(analysed_store, status=status, category=category, analytics=False))

    def no_scan(store):
        raise AssertionError("the tables are fresh: the page should not scan the store's reading list")

    monkeypatch.setattr(models, "reading_index", no_scan)
    from_tables = _page(models.reading_page(analysed_store, status=status, category=category))
    if category != "no such":
        assert from_store["categories"], "the corpus should fill the page"
    if not category:
        assert any(c[3] for c in from_store["categories"]), "some category should have more than it shows"
    assert from_tables == from_store


@pytest.mark.parametrize("reserve", [50, 0])  # 0: a list that loses a paper is read from the tables again
def test_after_status_changes_the_tables_and_the_changes_give_the_page_the_store_gives(analysed_store, monkeypatch,
                                                                                       reserve: int) -> None:
    from pyoxigraph import NamedNode

    import kg.analytics.overview
    from kg.graphs import READING
    from kg.reading import set_status, status_removal
    from kg.store.base import Activity

    monkeypatch.setattr(models, "PAPERS_PER_CATEGORY", 4)
    monkeypatch.setattr(kg.analytics.overview, "RESERVE", reserve)
    before = models.reading_page(analysed_store)
    # papers whose one status is the reading state's (where another graph has one too, the
    # store's own reading page shows either; the tables rank the reading state's first)
    own = {str(r["p"]) for r in analysed_store.select(f"""SELECT ?p WHERE {{
        GRAPH {READING} {{ ?p tkg:readingStatus ?s }}
        FILTER NOT EXISTS {{ GRAPH ?g {{ ?p tkg:readingStatus ?o }} FILTER(?g != {READING}) }} }}""").records()}
    papers = [p for c in before["categories"] for p in c.papers if str(p["paper"]) in own]
    first, second, third = papers[0], papers[-1], papers[1]
    set_status(analysed_store, NamedNode(str(first["paper"])), "skipped" if first["status"] != "skipped" else "read")
    set_status(analysed_store, NamedNode(str(second["paper"])), "a custom status")
    with analysed_store.transaction(Activity("test removal")) as tx:  # one paper off the reading state
        status_removal(tx, NamedNode(str(third["paper"])), previous=str(third["status"]), via="test")
    from_store = _page(models.reading_page(analysed_store, analytics=False))
    cards = models.technique_cards(analysed_store, counts=False)
    counted_by_store = [(c["iri"], c["papers"], c["read"], c["readingBadge"])
                        for c in models.count_papers(analysed_store, [dict(c) for c in cards], analytics=False)]

    def no_scan(store):
        raise AssertionError("only statuses changed: the page should not scan the store's reading list")

    monkeypatch.setattr(models, "reading_index", no_scan)
    after = models.reading_page(analysed_store)
    assert "stale" not in after
    assert _page(after) == from_store
    assert after["counts"] != before["counts"]
    monkeypatch.setattr(models, "_PAPER_COUNTS", "not a query: the tables count")
    assert [(c["iri"], c["papers"], c["read"], c["readingBadge"])
            for c in models.count_papers(analysed_store, [dict(c) for c in cards])] == counted_by_store


def test_a_long_reading_list_is_counted_from_stale_tables_and_the_page_says_so(analysed_store, monkeypatch) -> None:
    from pyoxigraph import Literal, NamedNode, Triple

    from kg.graphs import graph_iri
    from kg.reading import set_status
    from kg.store.base import Activity
    from kg.vocab import SKOS

    monkeypatch.setattr(models, "PAPERS_PER_CATEGORY", 4)
    before = models.reading_page(analysed_store)
    assert "stale" not in before
    shown = before["categories"][0].papers[0]
    new = "skipped" if shown["status"] != "skipped" else "read"
    set_status(analysed_store, NamedNode(str(shown["paper"])), new)
    with analysed_store.transaction(Activity("test note")) as tx:  # a graph besides the reading state changes
        tx.insert(graph_iri("test-notes"), [Triple(NamedNode("https://example.org/n"), SKOS.note, Literal("x"))])

    def no_scan(store):
        raise AssertionError("a long list: the page should count from the stale tables, not scan the store")

    monkeypatch.setattr(models, "reading_index", no_scan)
    after = models.reading_page(analysed_store, stale_above=before["total"])
    assert "stale" in after["stale"] and "kg analytics build" in after["stale"]
    assert after["total"] == before["total"] and after["counts"] == before["counts"]  # the tables' counts
    papers = {str(p["paper"]): p for c in after["categories"] for p in c.papers}
    assert papers[str(shown["paper"])]["status"] == new  # but each paper shown as it is now
    monkeypatch.undo()
    short = models.reading_page(analysed_store, stale_above=before["total"] + 1)  # a short list asks the store
    assert "stale" not in short
