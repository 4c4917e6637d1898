"""Paging a grouped query from its small side (kg.keyfirst): the narrow query keeps what the
page key needs and nothing else, and its pages are the pages of the whole sorted result."""

from __future__ import annotations

import pytest

import queries
from kg.keyfirst import narrow
from kg.paging import decode_cursor, page_rows, parse_key, select_page, without_order

EX = "http://example.org/"
G = "https://w3id.org/techkg/graph/keyfirst-test"

GROUPED = f"""SELECT ?item (MIN(?n) AS ?name) (SAMPLE(?c) AS ?colour) (COUNT(?tag) AS ?tags) WHERE {{
  ?item a <{EX}Item> .
  OPTIONAL {{ ?item <{EX}name> ?n }}
  OPTIONAL {{ ?item <{EX}colour> ?c }}
  OPTIONAL {{ ?item <{EX}tag> ?tag }}
}}
GROUP BY ?item
ORDER BY ?name ?item"""


def _items(store, n: int) -> None:
    lines = []
    for i in range(n):
        lines.append(f"<{EX}i{i:03d}> a <{EX}Item> ; <{EX}colour> \"c{i % 4}\" .")
        if i % 6:
            lines.append(f'<{EX}i{i:03d}> <{EX}name> "n{i % 5}" .')
        lines += [f'<{EX}i{i:03d}> <{EX}tag> "t{k}" .' for k in range(i % 3)]
    store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")


def test_the_narrow_query_leaves_out_only_the_optionals_the_key_does_not_need() -> None:
    named = queries.get("bibliography")
    narrowed = narrow(named.text, named.page)
    assert narrowed is not None and narrowed.groups == ("paper",)
    assert "dcterms:title" in narrowed.text and "tkg:position" in narrowed.text
    assert "bibo:authorList" not in narrowed.text and "tkg:citationKey" not in narrowed.text
    assert "GROUP_CONCAT" not in narrowed.text


def test_a_query_whose_key_needs_a_repeat_sensitive_aggregate_is_not_narrowed() -> None:
    assert narrow(GROUPED, parse_key("?tags ?item")) is None
    # an OPTIONAL whose variable a FILTER outside reads cannot be left out
    filtered = (f"SELECT ?item (MIN(?n) AS ?name) WHERE {{ ?item a <{EX}Item> OPTIONAL {{ ?item <{EX}c> ?c }} "
                f"FILTER(!BOUND(?c)) OPTIONAL {{ ?item <{EX}name> ?n }} }} GROUP BY ?item")
    assert narrow(filtered, parse_key("?name ?item")) is None
    assert narrow(GROUPED.replace("GROUP BY ?item", ""), parse_key("?name ?item")) is None  # not grouped


@pytest.mark.parametrize("key", ["?name ?item", "DESC(?name) ?colour ?item"])
def test_pages_found_from_the_key_are_the_pages_of_the_whole_sorted_result(fresh_store, key: str) -> None:
    _items(fresh_store, 60)
    parsed = parse_key(key)
    assert narrow(GROUPED, parsed) is not None
    whole = fresh_store.stream(without_order(GROUPED))
    expected = list(select_page(whole.variables, whole.rows, parsed, None, None))
    rows, cursor = [], None
    while True:
        stream = fresh_store.page(GROUPED, parsed, 7, None if cursor is None else decode_cursor(cursor, parsed))
        page = page_rows(stream.variables, stream.rows, parsed, 7)
        rows += list(page)
        if page.next is None:
            break
        cursor = page.next
    assert [r[0] for r in rows] == [r[0] for r in expected]
    assert rows == expected  # every column filled in, the tag counts included
