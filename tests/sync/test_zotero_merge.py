"""The three-way merge of a paper's synced record (pure logic)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.zotero_merge import Record, Stamps, agreed_base, merge

BASE = Record.make(title="Attention Is All You Need", status="to-read", tags={"nlp"}, categories={"Attention"},
                   notes={"n1": "<p>first</p>"})
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def later(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def test_a_field_changed_on_one_side_takes_that_value() -> None:
    graph = Record.make(**{**BASE.to_json(), "status": "read"})
    zotero = Record.make(**{**BASE.to_json(), "title": "Attention is all you need"})
    merged = merge(BASE, graph, zotero)
    assert merged.result.status == "read" and merged.result.title == "Attention is all you need"
    assert merged.conflicts == ()
    assert merged.to_zotero(zotero) == ["status"] and merged.to_graph(graph) == ["title"]


@pytest.mark.parametrize(("rule", "graph_at", "zotero_at", "winner"), [
    ("graph", later(1), later(2), "graph"),
    ("zotero", later(2), later(1), "zotero"),
    ("newest", later(1), later(2), "zotero"),
    ("newest", later(2), later(1), "graph"),
    ("newest", later(1), later(1), "graph"),
])
def test_the_same_field_changed_on_both_sides_follows_the_rule(rule: str, graph_at: dt.datetime,
                                                               zotero_at: dt.datetime, winner: str) -> None:
    graph = Record.make(**{**BASE.to_json(), "status": "read"})
    zotero = Record.make(**{**BASE.to_json(), "status": "Skimmed twice"})
    merged = merge(BASE, graph, zotero, rule=rule, graph_stamps=Stamps(status=graph_at),
                   zotero_stamps=Stamps(status=zotero_at))
    [conflict] = merged.conflicts
    assert conflict.field == "status" and conflict.winner == winner and conflict.rule == rule
    assert merged.result.status == conflict.winning_value
    assert conflict.losing_value == ("Skimmed twice" if winner == "graph" else "read")
    assert conflict.base == "to-read"


def test_tags_and_categories_merge_element_by_element() -> None:
    graph = Record.make(**{**BASE.to_json(), "tags": {"nlp", "mine"}, "categories": set()})
    zotero = Record.make(**{**BASE.to_json(), "tags": {"theirs"}, "categories": {"Attention", "MoE"}})
    merged = merge(BASE, graph, zotero)
    assert merged.result.tags == {"mine", "theirs"}
    assert merged.result.categories == {"MoE"}
    assert merged.conflicts == ()


def test_an_edited_note_beats_its_deletion_whatever_the_rule() -> None:
    graph = BASE.with_notes({})
    zotero = BASE.with_notes({"n1": "<p>first, revised</p>", "n2": "<p>new</p>"})
    merged = merge(BASE, graph, zotero, rule="graph")
    assert merged.result.note_map == {"n1": "<p>first, revised</p>", "n2": "<p>new</p>"}
    [conflict] = merged.conflicts
    assert (conflict.field, conflict.winner, conflict.rule) == ("note:n1", "zotero", "edit-beats-delete")
    assert conflict.losing_value is None


def test_deleted_in_zotero_and_untouched_in_the_graph_is_deleted() -> None:
    merged = merge(BASE, BASE, Record.make(**{**BASE.to_json(), "present": False}))
    assert merged.result.present is False and merged.conflicts == ()


def test_deleted_in_zotero_but_edited_in_the_graph_is_kept_and_reported() -> None:
    graph = Record.make(**{**BASE.to_json(), "status": "reading"})
    merged = merge(BASE, graph, Record.make(**{**BASE.to_json(), "present": False}), rule="zotero")
    assert merged.result.present is True and merged.result.status == "reading"
    [conflict] = merged.conflicts
    assert (conflict.field, conflict.winner, conflict.rule) == ("present", "graph", "edit-beats-delete")


def test_without_a_base_every_difference_is_a_change_on_both_sides() -> None:
    graph = Record.make(title="GPipe", status="read")
    zotero = Record.make(title="GPipe", status="to-read", tags={"pipeline"})
    merged = merge(None, graph, zotero, rule="graph")
    assert merged.result == Record.make(title="GPipe", status="read", tags={"pipeline"})
    assert [c.field for c in merged.conflicts] == ["status"]


def test_one_sided_records_pass_through() -> None:
    assert merge(None, None, BASE).result == BASE
    assert merge(None, BASE, None).result == BASE
    with pytest.raises(ValueError):
        merge(None, None, None)
    with pytest.raises(ValueError, match="unknown conflict rule"):
        merge(BASE, BASE, BASE, rule="coin")


def test_a_read_that_cannot_write_leaves_conflicts_pending_with_the_graph_value() -> None:
    graph = Record.make(**{**BASE.to_json(), "title": "ours"})
    zotero = Record.make(**{**BASE.to_json(), "title": "theirs"})
    merged = merge(BASE, graph, zotero, resolve=False)
    assert merged.result.title == "ours" and merged.conflicts[0].rule == "pending"


def test_the_new_base_advances_only_where_zotero_holds_the_result() -> None:
    result = Record.make(**{**BASE.to_json(), "status": "read", "title": "renamed"})
    zotero_now = Record.make(**{**BASE.to_json(), "title": "renamed"})
    base = agreed_base(BASE, result, zotero_now)
    assert base.title == "renamed" and base.status == "to-read"


def test_records_round_trip_through_json() -> None:
    assert Record.from_json(BASE.to_json()) == BASE


# -- laws, over random records --------------------------------------------------------------------

TITLES = st.sampled_from([None, "A", "B", "C"])
STATUSES = st.sampled_from([None, "to-read", "read", "Skimmed twice", "📗 later"])
TAGS = st.frozensets(st.sampled_from(["a", "b", "c", "d"]))
NOTES = st.dictionaries(st.sampled_from(["n1", "n2", "n3"]), st.sampled_from(["x", "y", "z"]))
RECORDS = st.builds(lambda t, s, g, c, n: Record.make(title=t, status=s, tags=g, categories=c, notes=n),
                    TITLES, STATUSES, TAGS, TAGS, NOTES)


@settings(max_examples=300, deadline=None)
@given(base=RECORDS, graph=RECORDS, zotero=RECORDS, rule=st.sampled_from(["newest", "zotero", "graph"]))
def test_merge_laws(base: Record, graph: Record, zotero: Record, rule: str) -> None:
    merged = merge(base, graph, zotero, rule=rule, graph_stamps=Stamps(item=later(1)),
                   zotero_stamps=Stamps(item=later(2)))
    result = merged.result
    if graph == base:
        assert result == zotero and merged.conflicts == ()
    if zotero == base:
        assert result == graph and merged.conflicts == ()
    conflicted = {c.field for c in merged.conflicts}
    for name in ["title", "status"] + [f"note:{n}" for n in set(base.note_map) | set(graph.note_map)
                                       | set(zotero.note_map)]:
        b, g, z, r = (x.value(name) for x in (base, graph, zotero, result))
        assert r in (g, z)
        both_changed = g != b and z != b and g != z
        assert (name in conflicted) == both_changed
        if not both_changed:
            assert r == (z if g == b else g)
    for c in merged.conflicts:
        assert c.winning_value == result.value(c.field)
        assert c.losing_value in (graph.value(c.field), zotero.value(c.field))
    for element in "abcd":
        kept = element in result.tags
        assert kept == ((element in graph.tags and element in zotero.tags)
                        or (element not in base.tags and (element in graph.tags or element in zotero.tags)))
    assert merge(result, result, result).result == result
