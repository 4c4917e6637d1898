"""Reading state: statuses survive rebuilds, custom statuses are kept, history is recorded."""

from __future__ import annotations

import pytest
from pyoxigraph import NamedNode

from kg.build import build
from kg.errors import NotFoundError
from kg.graphs import READING
from kg.reading import current_statuses, reading_index, reading_rows, resolve_paper, set_status

ZERO = "https://arxiv.org/abs/1910.02054"


def test_a_status_set_by_hand_survives_rebuilding(built_store) -> None:
    paper = resolve_paper(built_store, "ZeRO: Memory Optimizations")
    assert paper.value == ZERO
    set_status(built_store, paper, "reading")
    build(built_store, validate=False)
    assert current_statuses(built_store)[ZERO][0] == "reading"


def test_custom_statuses_are_kept_verbatim(built_store) -> None:
    paper = resolve_paper(built_store, "1910.02054")
    change = set_status(built_store, paper, "🔥 Priority")
    assert change.status not in ("read", "to-read")
    label = built_store.select(
        "SELECT ?p ?l WHERE { ?p tkg:readingStatus ?s . ?s skos:prefLabel ?l }", {"p": paper}
    )
    assert [r["l"].value for r in label] == ["🔥 Priority"]


def test_every_change_is_an_event_with_time_and_origin(built_store) -> None:
    paper = resolve_paper(built_store, ZERO)
    set_status(built_store, paper, "read", via="web")
    events = built_store.select(
        """SELECT ?p ?via ?prev ?new WHERE { ?e a tkg:ReadingEvent ; tkg:paper ?p ; tkg:via ?via ;
             tkg:status ?new ; prov:atTime ?t OPTIONAL { ?e tkg:previousStatus ?prev } } ORDER BY ?t""",
        {"p": paper},
    ).records()
    assert [e["via"] for e in events] == ["reading-list", "web"]
    assert events[-1]["prev"].endswith("/status/to-read") and events[-1]["new"].endswith("/status/read")


def test_reading_rows_filter_by_status_and_category(built_store) -> None:
    read = reading_rows(built_store, status="read")
    assert len(read) == 8
    overlap = reading_rows(built_store, category="Compute-Communication Overlap")
    assert len(overlap) == 9


def test_the_reading_index_agrees_with_the_full_rows_and_puts_unlisted_papers_last(built_store) -> None:
    kimi = NamedNode("https://arxiv.org/abs/2510.26692")  # a technique's paper, not on the reading list
    set_status(built_store, kimi, "reading")
    index = reading_index(built_store)
    rows = reading_rows(built_store)
    assert [e.paper for e in index] == [r["paper"] for r in rows]
    assert [(e.status, list(e.categories)) for e in index] == [(r["status"], sorted(r["categories"])) for r in rows]
    last = index[-1]
    assert (last.paper, last.position, last.categories) == (kimi.value, None, ())
    assert last.title and last.title.startswith("Kimi Linear")


def test_reading_rows_can_be_limited_to_given_papers(built_store) -> None:
    wanted = [NamedNode(ZERO), NamedNode("https://w3id.org/techkg/id/paper/not-there")]
    assert [r["paper"] for r in reading_rows(built_store, papers=wanted)] == [ZERO]
    assert reading_rows(built_store, papers=[]) == []


def test_an_unknown_paper_suggests_close_titles(built_store) -> None:
    with pytest.raises(NotFoundError) as err:
        resolve_paper(built_store, "Megatorn-LM: Training Multi-Billion Parameter")
    assert "Megatron" in (err.value.hint or "")


def test_an_exact_title_is_found_without_reading_every_title(built_store, monkeypatch) -> None:
    asked: list[str] = []
    select = built_store.select

    def counting(sparql, bindings=None):  # the real store's answer, with the query noted
        asked.append(sparql)
        return select(sparql, bindings)

    monkeypatch.setattr(built_store, "select", counting)
    assert resolve_paper(built_store, "GPipe").value == "https://arxiv.org/abs/1811.06965"
    title = "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models"
    assert resolve_paper(built_store, title) == NamedNode(ZERO)
    assert len(asked) == 2  # one lookup each, no scan of the titles
    asked.clear()
    assert resolve_paper(built_store, "gpipe").value == "https://arxiv.org/abs/1811.06965"  # not exact: the scan
    assert len(asked) == 2


def test_a_paper_matching_nothing_says_how_to_name_one(built_store) -> None:
    with pytest.raises(NotFoundError) as caught:
        resolve_paper(built_store, "zzqx wvvk")
    assert caught.value.hint is not None and "arXiv id" in caught.value.hint and "--add" in caught.value.hint


@pytest.mark.parametrize("status, says", [("On\nhold", "one line"), ("Tab\there", "one line"),
                                          ("x" * 61, "at most 60 characters")])
def test_a_custom_status_is_one_short_line(kg_cli, built_store_path, status: str, says: str) -> None:  # type: ignore[no-untyped-def]
    out = kg_cli("reading", "set", "GPipe", status, "--custom", store=built_store_path)
    assert out.returncode == 1 and says in " ".join(out.stderr.split()) and "Traceback" not in out.stderr
    from kg.errors import StatusError
    from kg.reading import resolve_paper, set_status
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(built_store_path)
    try:
        with pytest.raises(StatusError):  # the library refuses it too (the workbench writes through it)
            set_status(store, resolve_paper(store, "GPipe"), status, via="web")
        from kg.reading import add_paper, status_change
        from kg.store.base import Activity

        before = store.count(READING)
        with pytest.raises(StatusError):  # and so does the one step every writer takes
            with store.transaction(Activity("a writer that skips the checks")) as tx:
                status_change(tx, resolve_paper(store, "GPipe"), status, previous=None, via="zotero")
        with pytest.raises(StatusError):
            add_paper(store, NamedNode("https://example.org/paper/unlisted"), status)
        after = store.count(READING)
        assert after == before
    finally:
        store.close()
