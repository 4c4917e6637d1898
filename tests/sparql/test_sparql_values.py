"""List parameters (technique[]) bound as multi-row VALUES blocks, and values that stay terms."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

import queries
from kg.errors import ParameterError
from kg.sparqltext import inject_values

EX = "http://example.org/"
INJECTIONS = ['x> } ; DROP ALL ; #', '"} UNION { ?s ?p ?o }', "'''}} ; CLEAR ALL", "a\\\" } #\n} UNION {"]


@pytest.fixture
def data() -> ox.Store:
    store = ox.Store()
    for i in range(3):
        store.add(ox.Quad(ox.NamedNode(f"{EX}s{i}"), ox.NamedNode(EX + "p"), ox.Literal(f"v{i}"), ox.DefaultGraph()))
    return store


def subjects(store: ox.Store, query: str) -> list[str]:
    return sorted(s["s"].value for s in store.query(query))  # type: ignore[union-attr]


def test_a_list_gives_one_row_per_value_and_an_empty_list_none(data: ox.Store) -> None:
    query = f"SELECT ?s WHERE {{ ?s <{EX}p> ?v }}"
    assert subjects(data, inject_values(query, {"v": [ox.Literal("v0"), ox.Literal("v2")]})) == [f"{EX}s0", f"{EX}s2"]
    assert subjects(data, inject_values(query, {"v": []})) == []
    both = inject_values(query, {"v": [ox.Literal("v1")], "s": ox.NamedNode(f"{EX}s1")})
    assert subjects(data, both) == [f"{EX}s1"]


@pytest.mark.parametrize("value", INJECTIONS)
def test_an_injection_attempt_in_a_list_stays_one_literal(data: ox.Store, value: str) -> None:
    query = f"SELECT ?s WHERE {{ ?s <{EX}p> ?v }}"
    text = inject_values(query, {"v": [ox.Literal("v0"), ox.Literal(value)]})
    assert subjects(data, text) == [f"{EX}s0"]
    assert len(data) == 3


def test_prepare_inlines_lists_and_leaves_single_values_as_bindings() -> None:
    named = queries.get("compare-techniques")
    text, bindings = queries.prepare(named, {"technique": ["https://w3id.org/techkg/id/technique/kda",
                                                           "https://w3id.org/techkg/id/technique/mla"]})
    assert bindings == {} and text.count("<https://w3id.org/techkg/id/technique/kda>") >= 1
    assert "(<https://w3id.org/techkg/id/technique/kda>) (<https://w3id.org/techkg/id/technique/mla>)" in text
    text, bindings = queries.prepare(queries.get("stale-repositories"), {"months": "3"})
    assert text == queries.get("stale-repositories").text and str(bindings["months"]) == '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'


def test_list_parameters_split_on_commas_and_repeat() -> None:
    named = queries.get("compare-techniques")
    bound = queries.bind(named, {"technique": ["http://x/a,http://x/b", "http://x/c"]})
    assert [t.value for t in bound["technique"]] == ["http://x/a", "http://x/b", "http://x/c"]  # type: ignore[union-attr]
    with pytest.raises(ParameterError, match="empty"):
        queries.bind(named, {"technique": " , "})


def test_an_unreadable_param_header_line_is_reported() -> None:
    from queries import _parse

    with pytest.raises(Exception, match="cannot read the header line"):
        _parse("broken", "# title: t\n# param ?x integer\nSELECT ?x WHERE {}")
    parsed = _parse("ok", "# param ?x: string (optional) -- text\n# param ?y: date (required)\nSELECT * WHERE {}")
    assert [(p.name, p.required, p.signature) for p in parsed.params] == [
        ("x", False, "string (optional)"), ("y", True, "date (required)")]
