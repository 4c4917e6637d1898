"""Keyset paging (kg.paging) of named queries: every row once and in order across pages,
ties on the sort key and unbound keys included, rows inserted or removed between pages,
on the library, the CLI and the endpoint."""

from __future__ import annotations

import json
import re

import httpx
import pytest

import kg.answer
import queries
from kg.errors import ParameterError
from kg.paging import SortKey, decode_cursor, page_rows, paged_query, parse_key, projection
from kg.resolve import Resolver

EX = "http://example.org/"
STATUS = "https://w3id.org/techkg/id/status/"
G = "https://w3id.org/techkg/graph/paging-test"


def _items(store, n: int) -> None:
    """n items; scores with many ties and some missing, names with ties too."""
    lines = []
    for i in range(n):
        lines.append(f"<{EX}i{i:03d}> a <{EX}Item> .")
        if i % 5:
            lines.append(f'<{EX}i{i:03d}> <{EX}score> {i % 4} .')
        if i % 7:
            lines.append(f'<{EX}i{i:03d}> <{EX}name> "n{i % 3}" .')
    store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")


ITEMS = (f"SELECT ?item ?score ?name WHERE {{ ?item a <{EX}Item> . OPTIONAL {{ ?item <{EX}score> ?score }} "
         f"OPTIONAL {{ ?item <{EX}name> ?name }} }} ORDER BY ?item")


def _all_pages(store, query: str, key: tuple[SortKey, ...], limit: int, via: str) -> tuple[list[tuple], int]:
    rows, cursor, pages = [], None, 0
    while True:
        values = None if cursor is None else decode_cursor(cursor, key)
        if via == "sparql":  # the server orders (GraphStore.page), as on a remote store
            stream = store.stream(paged_query(query, key, limit, values))
        else:  # the embedded store picks the page in Python
            stream = store.page(query, key, limit, values)
        page = page_rows(stream.variables, stream.rows, key, limit)
        got = list(page)
        assert len(got) <= limit
        rows += got
        pages += 1
        if page.next is None:
            return rows, pages
        cursor = page.next


@pytest.mark.parametrize("via", ["sparql", "python"])
@pytest.mark.parametrize("key", ["?score ?item", "DESC(?score) ?name ?item", "?name DESC(?score) DESC(?item)",
                                 "LAST(?score) ?item", "LAST(?name) DESC(?score) ?item"])
def test_pages_hold_every_row_once_in_key_order_with_ties_and_unbound_keys(fresh_store, key: str, via: str) -> None:
    _items(fresh_store, 60)
    sort = parse_key(key)
    order = " ".join(str(k) for k in sort)
    whole = [tuple(r) for r in fresh_store.stream(ITEMS.replace("ORDER BY ?item", f"ORDER BY {order}"))]
    assert len(whole) == 60
    paged, pages = _all_pages(fresh_store, ITEMS, sort, 7, via)
    assert pages == 9
    assert paged == whole  # the same rows, each once, in the same order


def test_a_page_key_must_be_projected_and_readable() -> None:
    with pytest.raises(ValueError, match="not projected"):
        paged_query(ITEMS, parse_key("?missing"), 5, None)
    with pytest.raises(ValueError, match="sort key"):
        parse_key("?a LOWER(?b)")
    # unbound last: written LAST(?v) in a page key, read from an ORDER BY's (!BOUND(?v)) ?v
    assert parse_key("LAST(?p) ?t") == parse_key("(!BOUND(?p)) ?p ?t") == (SortKey("p", last=True), SortKey("t"))
    assert str(SortKey("p", last=True)) == "(!BOUND(?p)) ?p"
    with pytest.raises(ValueError, match="orders"):
        parse_key("(!BOUND(?p)) ?q")


def test_only_a_select_query_is_paged_and_its_projection_names_aliases() -> None:
    assert projection("SELECT DISTINCT ?a (COUNT(?b) AS ?n) (SAMPLE(?c) AS ?d) WHERE { ?a ?b ?c } GROUP BY ?a") \
        == ["a", "n", "d"]
    # A CONSTRUCT with a sub-SELECT is not a SELECT: its rows are triples, not ?technique ?child.
    with pytest.raises(ValueError, match="not a SELECT query"):
        projection("CONSTRUCT { ?c ?r ?p } WHERE { { SELECT ?t ?c ?p WHERE { ?t ?r ?c } } ?c ?r ?p }")
    with pytest.raises(ValueError, match="SELECT \\* cannot be paged"):
        projection("SELECT * WHERE { ?s ?p ?o }")


# -- a named query, with the store changing between pages -------------------------------


def _read(store, paper: str, at: str, title: str) -> None:
    store.update(f"""INSERT DATA {{ GRAPH <{G}> {{
      <{EX}paper/{paper}> <https://w3id.org/techkg/ns#readingStatus> <{STATUS}read> ;
        <https://w3id.org/techkg/ns#statusChangedAt> "{at}"^^<http://www.w3.org/2001/XMLSchema#dateTime> ;
        <http://purl.org/dc/terms/title> "{title}" }} }}""")


def _keyed(rows: list[tuple], variables: list[str]) -> list[str]:
    return [str(r[variables.index("paper")].value) for r in rows]  # type: ignore[union-attr]


def test_rows_inserted_or_removed_between_pages_are_seen_once_or_not_at_all(fresh_store) -> None:
    for i in range(20):  # read-without-note sorts by DESC(?readAt): many ties on the time
        _read(fresh_store, f"p{i:02d}", f"2026-0{1 + i // 5}-01T00:00:00Z", f"Paper {i}")
    named = queries.get("read-without-note")
    first = kg.answer.answer(fresh_store, named, limit=6, analytics=False)
    rows = list(first.page)
    variables = first.page.variables
    assert first.page.next and len(rows) == 6
    seen = _keyed(rows, variables)
    _read(fresh_store, "newest", "2026-12-01T00:00:00Z", "Before the cursor")  # sorts before: never shown
    _read(fresh_store, "p99", "2026-03-01T00:00:00Z", "Tied with the cursor, after it")
    _read(fresh_store, "oldest", "2025-01-01T00:00:00Z", "After the cursor")
    fresh_store.update(f"DELETE WHERE {{ GRAPH <{G}> {{ <{EX}paper/p00> ?p ?o }} }}")  # not shown yet: gone
    cursor = first.page.next
    while cursor:
        page = kg.answer.answer(fresh_store, named, limit=6, after=cursor, analytics=False).page
        seen += _keyed(list(page), variables)
        cursor = page.next
    assert len(seen) == len(set(seen)), "a row came twice"
    expected = [f"{EX}paper/p{i:02d}" for i in range(19, 0, -1)] + [f"{EX}paper/p99", f"{EX}paper/oldest"]
    assert sorted(seen) == sorted(expected)
    full = list(kg.answer.answer(fresh_store, named, analytics=False).page)
    at, paper = variables.index("readAt"), variables.index("paper")
    full.sort(key=lambda r: r[paper].value)  # type: ignore[union-attr]
    full.sort(key=lambda r: r[at].value, reverse=True)  # type: ignore[union-attr]  # stable: ties by paper
    assert seen == [p for p in _keyed(full, variables) if p in seen]  # the page key's order


def test_a_bad_cursor_or_paging_a_query_without_a_key_is_refused(fresh_store) -> None:
    with pytest.raises(ParameterError, match="not a cursor") as err:
        kg.answer.answer(fresh_store, queries.get("read-without-note"), limit=2, after="nonsense")
    assert "previous page" in (err.value.hint or "")
    with pytest.raises(ParameterError, match="not read page by page"):
        kg.answer.answer(fresh_store, queries.get("reading-progress"), after="W10")


def test_every_query_that_can_grow_with_the_corpus_has_a_page_key() -> None:
    big = {"bibliography", "lineage-papers", "lineage-paper-links", "new-since", "reading-queue",
           "reading-queue-lineage", "read-without-note", "repositories", "lineage-nodes", "papers-by-author",
           "stale-repositories", "descendants", "lineage-relations", "lineage-edges", "technique-papers",
           "citations-of", "cited-by-technique", "reading-suggestions"}
    paged = {q.name for q in queries.all_queries() if q.page}
    assert big <= paged


# -- the CLI and the endpoint ------------------------------------------------------------


def test_kg_query_pages_through_a_result_with_the_printed_cursor(built_store_path, kg_cli) -> None:
    from kg.store.embedded import OxigraphStore

    with OxigraphStore(built_store_path) as store:
        for i in range(11):
            _read(store, f"c{i:02d}", f"2026-0{1 + i // 4}-01T00:00:00Z", f"CLI paper {i}")
    whole = kg_cli("query", "read-without-note", "-f", "jsonl", store=built_store_path, check=True)
    expected = [json.loads(line) for line in whole.stdout.splitlines()]
    assert len(expected) >= 11 and "next page" not in whole.stderr
    got, args = [], ["query", "read-without-note", "-f", "jsonl", "--limit", "4"]
    for _ in range(10):
        page = kg_cli(*args, store=built_store_path, check=True)
        got += [json.loads(line) for line in page.stdout.splitlines()]
        found = re.search(r"--after (\S+)", page.stderr)
        if not found:
            break
        args = ["query", "read-without-note", "-f", "jsonl", "--limit", "4", "--after", found.group(1)]
    expected.sort(key=lambda r: r["paper"])
    expected.sort(key=lambda r: r["readAt"], reverse=True)  # the page key: DESC(?readAt) ?paper ?title
    assert got == expected
    bad = kg_cli("query", "read-without-note", "--after", "xyz", store=built_store_path)
    assert bad.returncode != 0 and "not a cursor" in bad.stderr and "Traceback" not in bad.stderr


def test_the_endpoint_pages_a_named_query_with_a_next_link(serve, built_store) -> None:
    for i in range(9):
        _read(built_store, f"h{i:02d}", "2026-05-01T00:00:00Z", f"HTTP paper {i}")  # all tied on the time
    headers = {"Accept": "application/sparql-results+json"}
    with serve(built_store) as base, httpx.Client(base_url=base, timeout=60) as client:
        whole = client.get("/queries/read-without-note", headers=headers).json()["results"]["bindings"]
        url: str | None = f"{base}/queries/read-without-note?limit=4"
        got = []
        while url:
            answer = client.get(url, headers=headers)
            assert answer.status_code == 200 and answer.headers["X-TechKG-Answered-By"] == "sparql"
            got += answer.json()["results"]["bindings"]
            link = answer.links.get("next")
            url = link["url"] if link else None
        assert sorted(b["paper"]["value"] for b in got) == sorted(b["paper"]["value"] for b in whole)
        papers = [b["paper"]["value"] for b in got if "HTTP paper" in b["title"]["value"]]
        assert papers == sorted(papers) and len(papers) == 9  # ties on ?readAt, in ?paper order
        bad = client.get("/queries/read-without-note", params={"limit": "0"}, headers=headers)
        assert bad.status_code == 400
        bad = client.get("/queries/read-without-note", params={"after": "xyz"}, headers=headers)
        assert bad.status_code == 400 and "cursor" in bad.json()["error"]


def test_paging_keeps_the_query_meaning_with_bound_parameters(fresh_store) -> None:
    # repositories filters groups in HAVING with ?minStars: the bound value must still reach it.
    lines = []
    for i in range(12):
        lines.append(f"<{EX}r{i}> a <https://schema.org/SoftwareSourceCode> ; "
                     f"<https://w3id.org/techkg/ns#stars> {i * 10} .")
    fresh_store.update(f"INSERT DATA {{ GRAPH <{G}> {{ {' '.join(lines)} }} }}")
    named = queries.get("repositories")
    whole = list(kg.answer.answer(fresh_store, named, {"minStars": "50"}, Resolver(fresh_store), analytics=False).page)
    assert len(whole) == 7
    got, cursor = [], None
    while True:
        page = kg.answer.answer(fresh_store, named, {"minStars": "50"}, Resolver(fresh_store), limit=3, after=cursor,
                              analytics=False).page
        got += list(page)
        if not (cursor := page.next):
            break
    assert got == whole


@pytest.mark.parametrize("shown", [True, False])
def test_a_result_ordered_by_what_it_does_not_show_is_read_once_in_the_stores_order(
        fresh_store, monkeypatch, shown: bool) -> None:
    """An order by a variable the query shows is sorted as the rows come (the store reads the
    query once, unordered); one by a variable it does not show is the store's (read once too,
    not started unordered first)."""
    _items(fresh_store, 30)
    query = (f"SELECT ?item {'?score ' if shown else ''}WHERE {{ ?item a <{EX}Item> . "
             f"OPTIONAL {{ ?item <{EX}score> ?score }} }} ORDER BY DESC(?score) ?item")
    runs: list[str] = []
    real = type(fresh_store)._run
    monkeypatch.setattr(type(fresh_store), "_run", lambda self, text, **kw: runs.append(text) or real(self, text, **kw))
    stream = fresh_store.stream_ordered(query)
    got = [row[0] for row in stream.rows]
    runs_seen = list(runs)
    runs.clear()
    expected = [row[0] for row in fresh_store.stream(query).rows]
    assert got == expected and len(got) == 30
    assert len(runs_seen) == 1 and ("ORDER BY" in runs_seen[0]) is not shown
