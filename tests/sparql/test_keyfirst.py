"""Paging a grouped query from its small side (kg.keyfirst): the narrow query keeps what the
page key needs and nothing else, and its pages are the pages of the whole sorted result."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal

import kg.keyfirst
import queries
from kg.keyfirst import hashed, leading, narrow, narrow_prefix, restricted
from kg.paging import decode_cursor, key_function, page_rows, parse_key, select_page, sort_value, without_order
from kg.sparqltext import inject_values

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


def _pages(store, query: str, key, size: int) -> list:
    """Every row of ``query``, read page by page (``size`` rows) with the printed cursors."""
    rows, cursor = [], None
    while True:
        stream = store.page(query, key, size, None if cursor is None else decode_cursor(cursor, key))
        page = page_rows(stream.variables, stream.rows, key, size)
        rows += list(page)
        if page.next is None:
            return rows
        cursor = page.next


def _sorted_whole(store, query: str, key) -> list:
    """Every row of ``query`` at once, sorted by ``key``."""
    whole = store.stream(without_order(query))
    return list(select_page(whole.variables, whole.rows, key, None, None))


def _rows_read(store, monkeypatch) -> list[int]:
    """How many rows each query the store answers from now on gives, in order."""
    read: list[int] = []
    stream = type(store).stream

    def counted(self, text: str, *args, **kwargs):
        found = stream(self, text, *args, **kwargs)
        rows = list(found.rows)
        read.append(len(rows))
        return type(found)(found.variables, iter(rows))

    monkeypatch.setattr(type(store), "stream", counted)
    return read


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
    expected = _sorted_whole(fresh_store, GROUPED, parsed)
    rows = _pages(fresh_store, GROUPED, parsed, 7)
    assert [r[0] for r in rows] == [r[0] for r in expected]
    assert rows == expected  # every column filled in, the tag counts included


@pytest.mark.parametrize("order", ["?name ?item", "?name", "DESC(?colour) ?name"])
def test_a_whole_grouped_answer_is_read_a_few_groups_at_a_time_in_the_whole_sorted_results_order(
        fresh_store, monkeypatch, order: str) -> None:
    """The whole answer of a grouped query (kg query without --limit, by SPARQL) holds the
    whole result's rows in its order, groups that tie on it by their group values, and no
    query but the narrow one reads more than WHOLE_GROUPS groups' rows."""
    _items(fresh_store, 60)
    query = GROUPED.replace("ORDER BY ?name ?item", f"ORDER BY {order}")
    key = parse_key(order)
    whole = fresh_store.stream(without_order(query))
    by_key = key_function(key, whole.variables)
    expected = sorted(whole.rows, key=lambda r: (by_key(r), sort_value(r[0])))
    monkeypatch.setattr(kg.keyfirst, "WHOLE_GROUPS", 7)
    read = _rows_read(fresh_store, monkeypatch)
    answer = fresh_store.stream_ordered(query, in_lots=True)
    assert answer.variables == whole.variables
    assert list(answer.rows) == expected and len(expected) == 60
    narrow_at = read.index(60)  # (after the counts that choose how it joins its blocks)
    assert read[narrow_at + 1 :] == [7] * 8 + [4]  # then the groups, 7 at a time
    read.clear()
    plain = list(fresh_store.stream_ordered(query).rows)  # not in lots: one query, grouped by the store
    assert [by_key(r) for r in plain] == [by_key(r) for r in expected] and set(plain) == set(expected)
    assert read == [60]


def test_only_the_bibliography_reads_its_whole_answer_in_lots() -> None:
    """Lots pay only where the groups are many and wide (see DEVELOPING): the bibliography's
    authors and venues; a header with another value is refused with the fix."""
    import queries
    from kg.errors import QueryError

    assert [q.name for q in queries.all_queries() if q.in_lots] == ["bibliography"]
    with pytest.raises(QueryError, match="whole: in parts") as err:
        queries._parse("x", "# whole: in parts\nSELECT ?a WHERE { ?a ?b ?c }")
    assert "# whole: in lots" in err.value.hint


#: A grouped query with a HAVING on a value of a block the key does not read, and a parameter
#: (?least, bound from outside like a named query's) among its groups.
HAVING = f"""SELECT ?least ?item (MIN(?n) AS ?name) WHERE {{
  ?item a <{EX}Item> .
  OPTIONAL {{ ?item <{EX}name> ?n }}
  OPTIONAL {{ ?item <{EX}tag> ?tag }}
  OPTIONAL {{ ?item <{EX}colour> ?c }}
}}
GROUP BY ?least ?item
HAVING (MAX(COALESCE(?tag, "t0")) >= ?least)
ORDER BY ?name ?item"""


@pytest.mark.parametrize("size", [4, 9])
def test_a_having_is_kept_with_what_it_reads_and_pages_are_those_of_the_whole(fresh_store, size: int) -> None:
    _items(fresh_store, 60)
    key = parse_key("?name ?item")
    query = inject_values(HAVING, {"least": Literal("t1")})  # as a named query's parameter is bound
    narrowed = narrow(query, key)
    assert narrowed is not None and narrowed.groups == ("least", "item")
    assert "HAVING (MAX(COALESCE(?tag" in narrowed.text and f"<{EX}tag>" in narrowed.text
    assert f"<{EX}colour>" not in narrowed.text  # nothing reads it: left out
    expected = _sorted_whole(fresh_store, query, key)
    assert 0 < len(expected) < 60  # the HAVING keeps some items and not others
    assert _pages(fresh_store, query, key, size) == expected
    # a HAVING that counts rows could change where the narrow query has fewer: not narrowed
    assert narrow(query.replace('MAX(COALESCE(?tag, "t0")) >= ?least', "COUNT(?tag) > 1"), key) is None
    assert narrow(query.replace('MAX(COALESCE(?tag, "t0")) >= ?least', "COUNT(DISTINCT ?tag) > 1"), key) is not None


#: A grouped query whose OPTIONALs are of every kind the page's restriction meets: a chain of
#: patterns with a FILTER (hashed whole by Oxigraph unless restricted), a sub-select (which
#: must stand alone in its group) and a block that names no group variable.
SHAPES = f"""SELECT ?item (MIN(?n) AS ?name) (GROUP_CONCAT(DISTINCT ?friendName; separator="|") AS ?friends)
       (SAMPLE(?count) AS ?tagCount) (SAMPLE(?flag) AS ?flagged) WHERE {{
  ?item a <{EX}Item> .
  OPTIONAL {{ ?item <{EX}name> ?n }}
  OPTIONAL {{ ?item <{EX}friend> ?friend . ?friend <{EX}name> ?friendName . FILTER(STRSTARTS(?friendName, "n")) }}
  OPTIONAL {{ SELECT ?item (COUNT(?tag) AS ?count) WHERE {{ ?item <{EX}tag> ?tag }} GROUP BY ?item }}
  OPTIONAL {{ <{EX}settings> <{EX}flag> ?flag }}
}}
GROUP BY ?item
ORDER BY ?name ?item"""


def test_the_page_restriction_also_opens_each_optional_that_names_a_group_variable() -> None:
    rows = [(f"<{EX}i001>",), (f"<{EX}i002>",)]
    text = restricted(SHAPES, ("item",), rows)
    values = f"VALUES (?item) {{ (<{EX}i001>) (<{EX}i002>) }}"
    flat = " ".join(text.split())
    assert flat.count(values) == 4  # the query's own group, the name and the friends' blocks, the sub-select
    assert f"OPTIONAL {{ {values} ?item <{EX}friend>" in flat
    # a sub-select stands alone in its group, and reads the page's groups alone
    assert f"OPTIONAL {{ SELECT ?item (COUNT(?tag) AS ?count) WHERE {{ {values} ?item <{EX}tag>" in flat
    assert f"OPTIONAL {{ <{EX}settings>" in flat  # a block without ?item would only repeat rows
    # a group value left unbound (UNDEF) could join any row of a block: only the own group
    assert restricted(SHAPES, ("item",), [(None,), rows[0]]).count("VALUES (?item)") == 1


@pytest.mark.parametrize(("subselect", "opened"), [
    ("{ SELECT DISTINCT ?item WHERE { ?item ?p ?o } }", True),
    ("{ SELECT * WHERE { ?item ?p ?o } }", True),
    ("{ SELECT ?item (COUNT(*) AS ?n) WHERE { ?item ?p ?o } GROUP BY ?item }", True),
    ("{ SELECT ?item WHERE { ?item ?p ?o } LIMIT 10 }", False),  # its rows would be other rows
    ("{ SELECT ?item (COUNT(*) AS ?n) WHERE { ?item ?p ?o } GROUP BY ?item ?p }", True),
    ("{ SELECT (SAMPLE(?i) AS ?item) WHERE { ?i ?p ?o } GROUP BY ?p }", False),  # not the variable inside
    ("{ SELECT ?other WHERE { ?item ?p ?other } }", False),  # its ?item is its own
    ("{ SELECT ?item WHERE { { SELECT ?x WHERE { ?item ?p ?x } } ?item ?q ?x } }", True),
    ("{ SELECT ?item WHERE { ?x ?p ?o BIND(?x AS ?item) } }", False),  # a VALUES block cannot precede its BIND
])
def test_a_sub_select_reads_the_pages_groups_alone_where_that_changes_no_row(subselect: str, opened: bool) -> None:
    query = f"SELECT ?item (MIN(?n) AS ?name) WHERE {{ ?item a <{EX}Item> . {subselect} }} GROUP BY ?item"
    text = " ".join(restricted(query, ("item",), [(f"<{EX}i001>",)]).split())
    values = f"VALUES (?item) {{ (<{EX}i001>) }}"
    assert text.count(values) == 1 + opened
    if opened:  # in the outermost sub-select alone: a nested one's ?item is its own
        assert "WHERE { " + values in text.split("{ SELECT", 1)[1]
        assert values not in text.split("{ SELECT", 2)[-1] or subselect.count("SELECT") == 1


def test_pages_of_a_query_with_every_kind_of_optional_are_the_pages_of_the_whole_result(fresh_store) -> None:
    _items(fresh_store, 40)
    friends = " ".join(f"<{EX}i{i:03d}> <{EX}friend> <{EX}i{(i * 7) % 40:03d}> ." for i in range(0, 40, 3))
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {friends} <{EX}settings> <{EX}flag> true . }} }}")
    key = parse_key("?name ?item")
    expected = _sorted_whole(fresh_store, SHAPES, key)
    rows = _pages(fresh_store, SHAPES, key, 6)
    assert rows == expected
    assert any(r[2] is not None for r in rows) and all(r[4] is not None for r in rows)


#: A value for each required parameter of a named query, on the built store.
REQUIRED = {"technique": "ZeRO", "author": "an", "since": "2020-01-01", "paper": "https://arxiv.org/abs/1811.06965",
            "subject": "https://w3id.org/techkg/id/technique/zero"}


#: A grouped query whose values of its own (lineage-nodes' ``kg technique edit`` values) are
#: chosen by BINDs from blocks, and a block reads what such a BIND chose (a repository's stars).
CHOSEN = f"""SELECT ?item (MIN(?n) AS ?name) (SAMPLE(?r) AS ?repo) (MAX(?s) AS ?stars) WHERE {{
  ?item a <{EX}Item> ; <{EX}name> ?n .
  OPTIONAL {{ ?item <{EX}repo> ?anyRepo }}
  OPTIONAL {{ ?item <{EX}myRepo> ?myRepo }}
  BIND(COALESCE(?myRepo, ?anyRepo) AS ?r)
  OPTIONAL {{ ?r <{EX}stars> ?s }}
  OPTIONAL {{ ?item <{EX}tag> ?tag }}
  BIND(CONCAT(?n, "!") AS ?shout)
  FILTER(?shout != "n3!")
}}
GROUP BY ?item"""


@pytest.mark.parametrize("key", ["?name ?item", "DESC(?stars) ?item"])
def test_blocks_and_binds_that_feed_only_each_other_are_left_out_and_pages_are_those_of_the_whole(
        fresh_store, key: str) -> None:
    lines = []
    for i in range(30):
        item = f"<{EX}c{i:02d}>"
        lines += [f"{item} a <{EX}Item> .", f'{item} <{EX}name> "n{i % 7}" .', f"{item} <{EX}repo> <{EX}r{i % 5}> ."]
        if i % 4 == 0:
            lines.append(f"{item} <{EX}myRepo> <{EX}r{(i + 1) % 5}> .")
        lines += [f'{item} <{EX}tag> "t{k}" .' for k in range(i % 3)]
    lines += [f"<{EX}r{j}> <{EX}stars> {j * 10} ." for j in range(5)]
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")
    parsed = parse_key(key)
    narrowed = narrow(CHOSEN, parsed)
    assert narrowed is not None
    flat = " ".join(narrowed.text.split())
    assert "<http://example.org/tag>" not in flat and "AS ?shout" in flat  # (a FILTER reads ?shout)
    if key == "?name ?item":  # the key reads no repository: the BIND, the blocks it reads and the stars go
        assert "COALESCE(?myRepo" not in flat and "<http://example.org/stars>" not in flat
    else:  # the stars read the chosen repository, and so on back
        assert "COALESCE(?myRepo" in flat and "<http://example.org/myRepo>" in flat
    expected = _sorted_whole(fresh_store, CHOSEN, parsed)
    assert len(expected) == 26 and _pages(fresh_store, CHOSEN, parsed, 4) == expected


def test_the_first_page_of_every_grouped_named_query_runs_on_the_store(built_store) -> None:
    """Each grouped named query with a page key, narrowed and restricted, is a query the
    store accepts, and its first page is the first rows of its whole sorted result."""
    from kg.resolve import Resolver
    from kg.sparqltext import inject_values

    checked = 0
    for named in queries.all_queries():
        if not named.page or narrow(named.text, named.page) is None:
            continue
        given = {p.name: REQUIRED[p.name] for p in named.params if p.required}  # a new one: give it a value here
        text = inject_values(named.text, queries.bind(named, given, Resolver(built_store)))
        whole = built_store.stream(without_order(text))
        expected = list(select_page(whole.variables, whole.rows, named.page, 5, None))
        stream = built_store.page(text, named.page, 5, None)
        got = list(stream.rows)
        key_at = [stream.variables.index(k.variable) for k in named.page]
        assert [[r[i] for i in key_at] for r in got] == [[r[i] for i in key_at] for r in expected], named.name
        checked += 1
    assert checked >= 5


#: A query that is not grouped: dated items (one of two kinds; made twice on one date is two
#: rows), each labelled by OPTIONAL blocks, some with two labels (two rows), by date first.
DATED = f"""SELECT ?when ?kind ?item ?label WHERE {{
  {{ ?item <{EX}made> ?when . BIND("made" AS ?kind) }} UNION {{ ?item <{EX}seen> ?when . BIND("seen" AS ?kind) }}
  UNION {{ ?item <{EX}remade> ?when . BIND("made" AS ?kind) }}
  OPTIONAL {{ ?item <{EX}name> ?n }}
  OPTIONAL {{ ?item <{EX}tag> ?tag }}
  BIND(COALESCE(?n, ?tag, STR(?item)) AS ?label)
}}
ORDER BY DESC(?when) ?kind ?label ?item"""


def test_a_query_that_is_not_grouped_is_narrowed_to_what_its_required_patterns_bind() -> None:
    key = parse_key("DESC(?when) ?kind ?label ?item")
    prefixed = narrow_prefix(DATED, key)
    assert prefixed is not None
    assert [k.variable for k in prefixed.prefix] == ["when", "kind"]  # ?label comes from a BIND
    assert prefixed.carried == ("when", "kind", "item")  # the key's part, then what the blocks read
    assert f"<{EX}name>" not in prefixed.text and "COALESCE" not in prefixed.text
    assert prefixed.rest.lstrip().startswith("OPTIONAL") and "COALESCE" in prefixed.rest
    # a required pattern after a block: the blocks would not be last
    assert narrow_prefix(DATED.replace("BIND(COALESCE", f"?item <{EX}kept> ?k . BIND(COALESCE"), key) is None
    # a FILTER that reads what a block gives would keep other rows without the block
    assert narrow_prefix(DATED.replace("BIND(COALESCE", "FILTER(BOUND(?n)) BIND(COALESCE"), key) is None
    # a block that is a sub-select would be read whole again for the page
    sub = DATED.replace(f"OPTIONAL {{ ?item <{EX}tag> ?tag }}",
                        f"OPTIONAL {{ SELECT ?item (MIN(?x) AS ?tag) WHERE {{ ?item <{EX}tag> ?x }} GROUP BY ?item }}")
    assert narrow_prefix(sub, key) is None
    assert narrow_prefix(DATED, parse_key("?label ?item")) is None  # no leading part bound by the patterns


@pytest.mark.parametrize("size", [1, 4, 9, 100])
def test_pages_of_a_query_found_from_its_key_prefix_are_the_pages_of_the_whole_result(fresh_store, size: int) -> None:
    """Pages of every size hold the whole result's rows; one page of all of them holds
    each row as often as the whole result does (a cursor cannot tell equal rows apart,
    so the smaller pages are read without repeated rows)."""
    lines = []
    for i in range(50):
        lines.append(f'<{EX}d{i:02d}> <{EX}{"made" if i % 3 else "seen"}> "2026-0{1 + i % 4}" .')  # many ties
        if i % 4:
            lines.append(f'<{EX}d{i:02d}> <{EX}name> "n{i % 7}" .')
        if i % 5 == 0:
            lines.append(f'<{EX}d{i:02d}> <{EX}name> "m{i % 3}" .')  # two labels: two rows
        if i % 6 == 0:
            lines.append(f'<{EX}d{i:02d}> <{EX}tag> "t{i}" .')
        if i % 7 == 1 and size == 100:  # made again on the same date: the same row twice
            lines.append(f'<{EX}d{i:02d}> <{EX}remade> "2026-0{1 + i % 4}" .')
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")
    key = parse_key("DESC(?when) ?kind ?label ?item")
    expected = _sorted_whole(fresh_store, DATED, key)
    rows = _pages(fresh_store, DATED, key, size)
    assert rows == expected and len(expected) > 55
    assert (len(set(expected)) < len(expected)) == (size == 100)


@pytest.mark.parametrize("size", [1, 4, 9, 100])
def test_pages_of_a_distinct_query_whose_facts_two_graphs_state_are_the_rows_of_the_whole_result_once(
        fresh_store, size: int) -> None:
    lines = []
    for i in range(40):
        lines.append(f'<{EX}d{i:02d}> <{EX}{"made" if i % 3 else "seen"}> "2026-0{1 + i % 4}" .')
        if i % 4:
            lines.append(f'<{EX}d{i:02d}> <{EX}name> "n{i % 7}" .')
        if i % 6 == 0:
            lines.append(f'<{EX}d{i:02d}> <{EX}tag> "t{i}" .')
    for graph in (G, f"{G}/again"):  # every fact stated by two graphs: each row twice in the union
        fresh_store.update(f"INSERT DATA {{ GRAPH <{graph}> {{ {' '.join(lines)} }} }}")
    distinct = DATED.replace("SELECT ?when", "SELECT DISTINCT ?when", 1)
    key = parse_key("DESC(?when) ?kind ?label ?item")
    assert narrow_prefix(distinct, key) is not None
    expected = _sorted_whole(fresh_store, distinct, key)
    assert len(expected) == len(set(expected)) == 40
    assert _pages(fresh_store, distinct, key, size) == expected
    # where the query does not show a variable the parts share, rows could be alike: not narrowed
    hidden = distinct.replace("SELECT DISTINCT ?when ?kind ?item ?label", "SELECT DISTINCT ?when ?kind ?label", 1)
    assert narrow_prefix(hidden, parse_key("DESC(?when) ?kind ?label")) is None


#: DATED with leading values the query makes itself (new-since's ?when is STR of a date).
MADE = DATED.replace(f"?item <{EX}made> ?when .", f"?item <{EX}made> ?at . BIND(STR(?at) AS ?when)") \
    .replace(f"?item <{EX}seen> ?when .", f"?item <{EX}seen> ?at . BIND(STR(?at) AS ?when)") \
    .replace(f"?item <{EX}remade> ?when .", f"?item <{EX}remade> ?at . BIND(STR(?at) AS ?when)")


def _dated(store, n: int, dates: int) -> None:
    lines = []
    for i in range(n):
        lines.append(f'<{EX}d{i:03d}> <{EX}{"made" if i % 3 else "seen"}> "2026-{1 + i % dates:02d}" .')
        if i % 4:
            lines.append(f'<{EX}d{i:03d}> <{EX}name> "n{i % 7}" .')
        if i % 5 == 0:
            lines.append(f'<{EX}d{i:03d}> <{EX}name> "m{i % 3}" .')  # two labels: two rows
    store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")


@pytest.mark.parametrize("size", [1, 4])
def test_a_page_whose_leading_values_the_query_makes_is_cut_by_the_store_and_pages_are_those_of_the_whole(
        fresh_store, monkeypatch, size: int) -> None:
    """The store orders the required part's rows by the leading key and hands over the first
    few (from the cursor's leading values on), not every row; the pages are still the whole
    result's, ties of a page's last date included."""
    _dated(fresh_store, 120, 12)  # 138 rows: 18 items have two labels
    key = parse_key("DESC(?when) ?kind ?label ?item")
    assert narrow_prefix(MADE, key) is not None
    expected = _sorted_whole(fresh_store, MADE, key)
    monkeypatch.setattr(kg.keyfirst, "RESTRICT_MOST", 20)  # a cut below the 130 rows
    read = _rows_read(fresh_store, monkeypatch)
    assert _pages(fresh_store, MADE, key, size) == expected and len(expected) == 138
    assert max(read) <= max(20, 20 * (size + 1)) + size + 1 < 120  # of the 120 dated items
    # a stored leading value (DATED's ?when) is not cut by the store: every row is read
    read.clear()
    assert _pages(fresh_store, DATED, key, 4)[:4] == _sorted_whole(fresh_store, DATED, key)[:4]
    assert 120 in read


def test_a_page_whose_leading_value_ties_for_more_rows_than_the_store_cut_is_the_whole_results(
        fresh_store, monkeypatch) -> None:
    _dated(fresh_store, 90, 2)  # 90 items on two dates: each date ties for 45 or more rows
    monkeypatch.setattr(kg.keyfirst, "RESTRICT_MOST", 10)
    key = parse_key("DESC(?when) ?kind ?label ?item")
    expected = _sorted_whole(fresh_store, MADE, key)
    assert _pages(fresh_store, MADE, key, 1) == expected and len(expected) == 103


#: A grouped query whose key starts with what a small sub-select gives: categories (some
#: without a position), then their items by name.
QUEUE = f"""SELECT ?position ?category ?item (MIN(?n) AS ?name) (COUNT(?tag) AS ?tags) WHERE {{
  {{ SELECT ?cat ?category ?position WHERE {{ ?cat a <{EX}Category> ; <{EX}label> ?category .
                                            OPTIONAL {{ ?cat <{EX}position> ?position }} }} }}
  ?item <{EX}in> ?cat .
  OPTIONAL {{ ?item <{EX}name> ?n }}
  OPTIONAL {{ ?item <{EX}tag> ?tag }}
}}
GROUP BY ?position ?category ?item"""


@pytest.mark.parametrize("size", [1, 3, 8, 50])
def test_pages_read_a_few_leading_values_at_a_time_are_the_pages_of_the_whole_result(fresh_store, size: int) -> None:
    lines = []
    for c in range(7):  # categories 0-2 without a position: they come first
        lines.append(f'<{EX}c{c}> a <{EX}Category> ; <{EX}label> "cat {c % 5}" .')  # two labels repeat
        if c > 2:
            lines.append(f"<{EX}c{c}> <{EX}position> {c % 4} .")  # two positions repeat too
    for i in range(40):
        lines.append(f"<{EX}q{i:02d}> <{EX}in> <{EX}c{(i * 3) % 7}> .")
        if i % 3:
            lines.append(f'<{EX}q{i:02d}> <{EX}name> "n{i % 4}" .')
        lines += [f'<{EX}q{i:02d}> <{EX}tag> "t{k}" .' for k in range(i % 3)]
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")
    key = parse_key("?position ?category ?name ?item")
    narrowed = narrow(QUEUE, key)
    assert narrowed is not None and leading(narrowed, key) is not None
    expected = _sorted_whole(fresh_store, QUEUE, key)
    rows = _pages(fresh_store, QUEUE, key, size)
    assert rows == expected and len(expected) == 40


def test_a_big_narrow_query_joins_a_small_block_by_hashing_and_a_large_one_by_lookups(fresh_store, monkeypatch) -> None:
    monkeypatch.setattr(kg.keyfirst, "HASH_LEAST", 10)
    _items(fresh_store, 60)  # 60 items: their names are few beside them; colours are many
    colours = " ".join(f"<{EX}other{i}> <{EX}colour> \"c\" ." for i in range(400))
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {colours} }} }}")
    query = GROUPED.replace("(SAMPLE(?c) AS ?colour)", "(MIN(?c) AS ?colour)")
    key = parse_key("?name ?colour ?item")
    narrowed = narrow(query, key)
    assert narrowed is not None

    def everything(text: str):
        stream = fresh_store.stream(text)
        return stream.variables, stream.rows

    flat = " ".join(hashed(narrowed.text, everything).split())
    assert f"OPTIONAL {{ SELECT * WHERE {{ ?item <{EX}name> ?n }} }}" in flat
    assert f"OPTIONAL {{ ?item <{EX}colour> ?c }}" in flat  # 460 rows: more than 4 per item
    monkeypatch.setattr(kg.keyfirst, "HASH_LEAST", 100)  # fewer items than that: looked up
    assert hashed(narrowed.text, everything) == narrowed.text
    monkeypatch.setattr(kg.keyfirst, "HASH_LEAST", 10)
    expected = _sorted_whole(fresh_store, query, key)
    rows = _pages(fresh_store, query, key, 9)
    assert rows == expected and len(rows) == 60


#: A grouped query whose key starts with a group variable that no sub-select gives: kinds, bound
#: in a union, with items taken away by a MINUS and a FILTER (one kind keeps none of its items).
LINKED = f"""SELECT ?kind ?item (MIN(?n) AS ?name) (COUNT(?tag) AS ?tags) WHERE {{
  {{ ?item <{EX}kind> ?kind }} UNION {{ ?kind <{EX}holds> ?item }}
  MINUS {{ ?item <{EX}hidden> true }}
  ?item <{EX}rank> ?rank .
  FILTER(?rank < 8)
  OPTIONAL {{ ?item <{EX}name> ?n }}
  OPTIONAL {{ ?item <{EX}tag> ?tag }}
}}
GROUP BY ?kind ?item"""


@pytest.mark.parametrize("size", [1, 4, 25])
@pytest.mark.parametrize("key", ["?kind ?name ?item", "DESC(?kind) ?item"])
def test_pages_read_a_few_values_of_a_leading_group_variable_at_a_time_are_the_pages_of_the_whole_result(
        fresh_store, monkeypatch, size: int, key: str) -> None:
    lines = []
    for i in range(50):
        item = f"<{EX}l{i:02d}>"
        lines.append(f"{item} <{EX}kind> <{EX}k{i % 9}> ." if i % 2 else f"<{EX}k{i % 9}> <{EX}holds> {item} .")
        lines.append(f"{item} <{EX}rank> {i % 10} .")
        if i % 9 == 4:
            lines.append(f"{item} <{EX}hidden> true .")  # every item of kind k4
        if i % 3:
            lines.append(f'{item} <{EX}name> "n{i % 4}" .')
        lines += [f'{item} <{EX}tag> "t{k}" .' for k in range(i % 3)]
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")
    parsed = parse_key(key)
    seeks: list = []
    real = kg.keyfirst.seek
    monkeypatch.setattr(kg.keyfirst, "seek", lambda *args: seeks.append(real(*args)) or seeks[-1])
    expected = _sorted_whole(fresh_store, LINKED, parsed)
    assert len(expected) == 35 and _pages(fresh_store, LINKED, parsed, size) == expected
    assert seeks and all(found is None for found in seeks)  # fewer rows than SEEK_LEAST: read whole
    monkeypatch.setattr(kg.keyfirst, "SEEK_LEAST", 20)
    seeks.clear()
    assert _pages(fresh_store, LINKED, parsed, size) == expected
    assert seeks and all(found is not None for found in seeks)  # read a few kinds at a time
    monkeypatch.setattr(kg.keyfirst, "SEEK_MOST", 3)  # more kinds than that: the narrow query whole
    seeks.clear()
    assert _pages(fresh_store, LINKED, parsed, size) == expected
    assert seeks and all(found is None for found in seeks)


#: A query that is not grouped, whose key starts with what a union binds, with an OPTIONAL
#: sub-select (lineage-paper-links' statuses): its rows are found a few kinds at a time too.
PLAIN = f"""SELECT DISTINCT ?kind ?item ?name WHERE {{
  {{ ?item <{EX}kind> ?kind }} UNION {{ ?kind <{EX}holds> ?item }}
  MINUS {{ ?item <{EX}hidden> true }}
  OPTIONAL {{ SELECT ?item ?name WHERE {{ ?item <{EX}name> ?name }} }}
}}"""


@pytest.mark.parametrize("size", [1, 6, 40])
def test_pages_of_a_query_that_is_not_grouped_read_a_few_leading_values_at_a_time_are_those_of_the_whole(
        fresh_store, monkeypatch, size: int) -> None:
    lines = []
    for i in range(45):
        item = f"<{EX}p{i:02d}>"
        lines.append(f"{item} <{EX}kind> <{EX}k{i % 7}> ." if i % 2 else f"<{EX}k{i % 7}> <{EX}holds> {item} .")
        if i % 7 == 2:
            lines.append(f"{item} <{EX}hidden> true .")
        lines += [f'{item} <{EX}name> "n{k}" .' for k in range(i % 3)]  # none, one or two names
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")
    key = parse_key("?kind ?item ?name")
    assert narrow(PLAIN, key) is None and narrow_prefix(PLAIN, key) is None  # (an OPTIONAL sub-select)
    seeks: list = []
    real = kg.keyfirst.seek
    monkeypatch.setattr(kg.keyfirst, "seek", lambda *args: seeks.append(real(*args)) or seeks[-1])
    monkeypatch.setattr(kg.keyfirst, "SEEK_LEAST", 20)
    expected = _sorted_whole(fresh_store, PLAIN, key)
    assert len(expected) == 45 - 7 + 12 and _pages(fresh_store, PLAIN, key, size) == expected  # 12: two names
    assert seeks and all(found is not None for found in seeks)


@pytest.mark.parametrize("changed", [
    PLAIN.replace("SELECT DISTINCT ?kind ?item ?name", "SELECT (COUNT(*) AS ?kind)"),  # one row of all
    PLAIN + "\nLIMIT 5",
    PLAIN.replace("SELECT DISTINCT ?kind ?item ?name", "SELECT DISTINCT ?item ?name"),  # ?kind not shown
    PLAIN.replace("MINUS", 'BIND("k" AS ?kind) MINUS'),
])
def test_a_query_that_a_restriction_of_its_leading_variable_could_change_is_not_read_a_few_values_at_a_time(
        changed: str) -> None:
    assert kg.keyfirst._plain(changed, parse_key("?kind ?item")) is None
    assert kg.keyfirst._plain(PLAIN, parse_key("?kind ?item")) is not None


#: A grouped query whose leading key variable one required pattern binds and others narrow
#: (read-without-note: the times of the read papers with a title).
DONE = f"""SELECT ?item ?at ?name (COUNT(?tag) AS ?tags) WHERE {{
  ?item <{EX}at> ?at .
  ?item <{EX}state> <{EX}done> ; <{EX}name> ?name .
  MINUS {{ ?item <{EX}hidden> true }}
  OPTIONAL {{ ?item <{EX}tag> ?tag }}
}}
GROUP BY ?item ?at ?name"""


@pytest.mark.parametrize("size", [1, 4, 50])
def test_leading_values_are_read_from_the_patterns_that_name_them_and_pages_are_those_of_the_whole(
        fresh_store, monkeypatch, size: int) -> None:
    lines = []
    for i in range(60):
        item = f"<{EX}d{i:02d}>"
        when = f'"2026-01-{1 + i % 12:02d}T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
        lines.append(f"{item} <{EX}at> {when} .")
        if i % 12 < 9:  # the last three times are those of items not done alone
            lines.append(f"{item} <{EX}state> <{EX}done> .")
        if i % 5:
            lines.append(f'{item} <{EX}name> "n{i % 3}" .')
        if i % 7 == 3:
            lines.append(f"{item} <{EX}hidden> true .")
        lines += [f'{item} <{EX}tag> "t{k}" .' for k in range(i % 3)]
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")
    key = parse_key("DESC(?at) ?item")
    monkeypatch.setattr(kg.keyfirst, "SEEK_LEAST", 5)
    narrowed = narrow(DONE, key)
    assert narrowed is not None
    found = kg.keyfirst._lead_values(narrowed, key, fresh_store._everything)
    assert found is not None
    assert f"<{EX}at>" in found[0] and f"<{EX}state>" not in found[0] and f"<{EX}name>" not in found[0]
    expected = _sorted_whole(fresh_store, DONE, key)
    shown = [i for i in range(60) if i % 12 < 9 and i % 5 and i % 7 != 3]
    assert len(expected) == len(shown) and _pages(fresh_store, DONE, key, size) == expected


@pytest.mark.parametrize(("group", "kept"), [
    ("{ ?a <p> ?b . ?a <q> ?c . ?c <r> ?d }", "{ ?a <p> ?b .\n}"),
    ("{ ?a <q> ?c ; <p> ?b . ?c <r> 1.5 }", "{ ?a <q> ?c ; <p> ?b .\n}"),  # a statement is kept whole
    ("{ ?a <p> ?b . BIND(1 AS ?c) }", None),  # anything but patterns: the group whole
    ("{ ?a <p> ?b }", None),
])
def test_the_leading_values_query_keeps_only_the_patterns_that_name_the_variable(group: str, kept: str | None) -> None:
    assert kg.keyfirst._naming(group, "b") == (kept or group)
