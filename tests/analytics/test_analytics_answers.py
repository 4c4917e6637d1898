"""Named queries answered from fresh analytics tables (kg.analytics.answers): the same rows
as SPARQL, pages that continue across both paths, and SPARQL (saying why) once stale."""

from __future__ import annotations

from collections import Counter

import pytest

import kg.answer
import queries
from kg.analytics.twins import TWINS
from kg.reading import resolve_paper, set_status
from kg.resolve import Resolver

#: Columns that are SAMPLEs of values a row may have several of (two venues, from the
#: catalog and the reading list; several lineage techniques behind one paper): any one
#: of them is the right answer.
SAMPLED = ("venue", "via", "viaName", "people", "repository")
CASES = [(name, {}) for name in TWINS if name not in ("new-since", "reading-queue-lineage", "papers-by-author")] + [
    ("reading-queue", {"section": "distributed"}),
    ("lineage-paper-links", {"technique": "https://w3id.org/techkg/id/technique/zero"}),
    ("lineage-papers", {"technique": "ZeRO,GDN"}),
    ("new-since", {"since": "2025-06-01"}),
    ("repositories", {"minStars": "20000"}),
    ("reading-queue-lineage", {"technique": "ZeRO"}),
    ("reading-queue-lineage", {"technique": "GQA"}),
    ("reading-list", {"status": "to-read"}),
    ("reading-list", {"category": "distributed"}),
    ("papers-by-author", {"author": "an"}),
    ("papers-by-author", {"author": "ZHANG"}),
]
#: GROUP_CONCAT columns and their separators: SPARQL leaves the order of the parts open.
CONCATS = {"types": " ", "authors": "\n", "venues": "\n", "categories": " | ", "techniques": ", ", "aliases": ", ",
           "organisations": ", ", "notes": "\x1f", "coauthors": ", "}


def _rows(store, name: str, params: dict[str, str], *, analytics: bool):
    found = kg.answer.answer(store, queries.get(name), params, Resolver(store), analytics=analytics)
    return found, list(found.page)


def _venues(store, paper) -> set[str]:
    return {r["v"].value for r in store.select("SELECT ?v WHERE { ?p tkg:venue ?v }", {"p": paper})}


def _concat(value, variable: str):
    """A GROUP_CONCAT's parts, in any order."""
    if variable in CONCATS and value is not None:
        return tuple(sorted(value.value.split(CONCATS[variable])))
    return value


@pytest.mark.parametrize(("name", "params"), CASES, ids=[f"{n}{'-' + '-'.join(p) if p else ''}" for n, p in CASES])
def test_a_twin_answers_the_rows_of_its_sparql_query(analysed_store, name: str, params: dict[str, str]) -> None:
    twin, ours = _rows(analysed_store, name, params, analytics=True)
    sparql, theirs = _rows(analysed_store, name, params, analytics=False)
    assert twin.source == "duckdb" and sparql.source == "sparql"
    assert twin.page.variables == sparql.page.variables
    assert ours, "the corpus should give this query rows"
    variables = twin.page.variables
    loose = [i for i, v in enumerate(variables) if v in SAMPLED]

    def exact(row):
        return tuple(_concat(v, variables[i]) for i, v in enumerate(row))

    def without_samples(row):
        return tuple(_concat(v, variables[i]) for i, v in enumerate(row) if i not in loose)

    mine, yours = Counter(map(exact, ours)), Counter(map(exact, theirs))
    if mine != yours:  # then only in a SAMPLEd column, and with a value the paper has
        assert Counter(map(without_samples, ours)) == Counter(map(without_samples, theirs))
        paper = variables.index("paper")
        for row in ours:
            if "venue" in variables and row[variables.index("venue")] is not None:
                assert row[variables.index("venue")].value in _venues(analysed_store, row[paper])


@pytest.mark.parametrize(("name", "size"), [("bibliography", 7), ("lineage-papers", 7),
                                            ("reading-list", 25)])  # its 53 listed papers, then those unlisted
def test_a_cursor_from_the_tables_continues_on_sparql_and_back(analysed_store, name: str, size: int) -> None:
    named = queries.get(name)  # the first two choose a page's rows by their keys first
    whole = list(kg.answer.answer(analysed_store, named, analytics=False, limit=100_000).page)
    first = kg.answer.answer(analysed_store, named, limit=size, analytics=True)
    assert first.source == "duckdb"
    rows = list(first.page)
    second = kg.answer.answer(analysed_store, named, limit=size, after=first.page.next, analytics=False)
    rows += list(second.page)
    third = kg.answer.answer(analysed_store, named, limit=size, after=second.page.next, analytics=True)
    rows += list(third.page)
    key = [first.page.variables.index(k.variable) for k in named.page]
    assert [[r[i] for i in key] for r in rows] == [[r[i] for i in key] for r in whole[: 3 * size]]
    if "ORDER BY" in named.text:  # the whole answer in the query's order too
        unpaged = list(kg.answer.answer(analysed_store, named, analytics=True).page)
        assert [[r[i] for i in key] for r in unpaged] == [[r[i] for i in key] for r in whole]
    if name == "reading-list":  # the pages crossed from the listed papers to the others
        position = first.page.variables.index("position")
        assert rows[0][position] is not None and rows[-1][position] is None


def test_stale_tables_leave_the_answer_to_sparql_and_say_why(analysed_store_path, kg_cli) -> None:
    fresh = kg_cli("query", "read-without-note", "-f", "csv", "--limit", "3", store=analysed_store_path, check=True)
    assert "answered from the DuckDB analytics tables" in fresh.stderr
    from kg.store.embedded import OxigraphStore

    with OxigraphStore(analysed_store_path) as store:
        set_status(store, resolve_paper(store, "GPipe"), "reading")
    stale = kg_cli("query", "read-without-note", "-f", "csv", "--limit", "3", store=analysed_store_path, check=True)
    assert "answered by SPARQL" in stale.stderr and "stale" in stale.stderr and "reading" in stale.stderr
    assert stale.stdout.splitlines()[0] == fresh.stdout.splitlines()[0]
    forced = kg_cli("query", "read-without-note", "--sparql", "-f", "csv", store=analysed_store_path, check=True)
    assert "answered" not in forced.stderr


def test_the_tables_draw_no_progress_bar_among_the_rows_a_query_writes(analysed_db) -> None:
    """DuckDB's own bar went to stdout, into kg query's JSON Lines or CSV in a pipe."""
    from kg.analytics.materialize import connect

    con = connect(analysed_db, read_only=True)
    try:
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone() == (False,)
    finally:
        con.close()


def test_each_default_answer_is_stored_whole_in_its_page_key_order(analysed_db) -> None:
    """kg analytics build keeps the whole answer of each twin run without parameters, sorted
    by the page key, so that a first page is the table's first rows (no scan, no sort)."""
    from kg.analytics.materialize import connect
    from kg.analytics.stored import answers_current, default_params, order_sql

    con = connect(analysed_db, read_only=True)
    try:
        assert answers_current(con)
        stored = {r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'answers'").fetchall()}
        defaulted = {name for name in TWINS if default_params(name) is not None}
        assert stored == defaulted | {name for name, twin in TWINS.items() if twin.stored is not None}
        assert {"bibliography", "reading-queue", "lineage-papers", "read-without-note"} <= defaulted
        assert "new-since" in stored  # its dated rows, read with the day given (checked against SPARQL above)
        for name in defaulted:
            table = f'answers."{name}"'
            as_stored = con.execute(f"SELECT * FROM {table}").fetchall()
            assert as_stored, name
            assert as_stored == con.execute(f"SELECT * FROM {table} ORDER BY {order_sql(queries.get(name))}").fetchall()
    finally:
        con.close()


def test_pages_of_a_stored_answer_give_each_row_once_in_order_and_other_parameters_skip_it(analysed_store) -> None:
    from kg.analytics.materialize import connect, database_path
    from kg.analytics.stored import answer_table, default_params

    named = queries.get("reading-queue")
    sparql = kg.answer.answer(analysed_store, named, analytics=False)
    variables, whole = sparql.page.variables, list(sparql.page)
    assert len(whole) > 8
    rows, after = [], None
    while True:
        page = kg.answer.answer(analysed_store, named, limit=4, after=after)
        assert page.source == "duckdb"
        rows += list(page.page)
        after = page.page.next
        if after is None:
            break
    key = [variables.index(k.variable) for k in named.page]
    assert [[r[i] for i in key] for r in rows] == [[r[i] for i in key] for r in whole]
    con = connect(database_path(analysed_store.location), read_only=True)
    try:
        assert answer_table(con, "reading-queue", default_params("reading-queue") or {}) is not None
        assert answer_table(con, "reading-queue", {"section": "distributed"}) is None
    finally:
        con.close()


def test_the_note_folds_at_the_terminal_width_and_the_next_page_command_stays_whole(analysed_store_path,
                                                                                   kg_cli) -> None:
    page = kg_cli("query", "bibliography", "-f", "jsonl", "--limit", "3", store=analysed_store_path,
                  env={"COLUMNS": "60"}, check=True)
    lines = page.stderr.splitlines()
    command = [line for line in lines if line.startswith("next page: ")]
    assert len(command) == 1 and len(command[0]) > 60
    # (a path longer than the width stays whole, on a line of its own)
    assert all(len(line) <= 60 or " " not in line for line in lines if line not in command)
    assert "answered from the DuckDB" in " ".join(lines)
    after = command[0].split("--after ")[1]
    following = kg_cli("query", "bibliography", "-f", "jsonl", "--limit", "3", "--after", after,
                       store=analysed_store_path, check=True)
    assert len(following.stdout.splitlines()) == 3
    assert not set(following.stdout.splitlines()) & set(page.stdout.splitlines())


@pytest.mark.parametrize(("name", "params"), [("new-since", {"since": "2025-06-01"}),
                                              ("reading-queue-lineage", {"technique": "ZeRO"}),
                                              ("bibliography", {})])
def test_without_answer_tables_of_this_version_the_twin_sql_gives_the_same_rows(analysed_store, monkeypatch,
                                                                                name: str, params) -> None:
    from kg.analytics import stored as answer_tables

    stored, stored_rows = _rows(analysed_store, name, params, analytics=True)
    monkeypatch.setattr(answer_tables, "answers_current", lambda con: False)
    computed, computed_rows = _rows(analysed_store, name, params, analytics=True)
    assert stored.source == computed.source == "duckdb"
    assert stored_rows and Counter(stored_rows) == Counter(computed_rows)


def test_an_incremental_build_remakes_only_the_answers_that_read_what_changed(analysed_store_path,
                                                                              tmp_path) -> None:
    """A new graph that states only DOIs: the answers that show DOIs are made again (and
    show it), the others are kept as they were."""
    import pyoxigraph as ox

    from kg.analytics import build
    from kg.analytics.materialize import database_path
    from kg.graphs import graph_iri
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore

    with OxigraphStore(analysed_store_path) as store:
        paper = resolve_paper(store, "GPipe")
        dois = tmp_path / "dois.nt"
        dois.write_text(f'{paper} <http://purl.org/ontology/bibo/doi> "10.9999/kg-test" .\n', encoding="utf-8")
        store.load_file(dois, graph=graph_iri("import/dois"), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                        activity=Activity("kg import rdf"))
        report = build(store, database_path(store.location))
        assert report.mode == "incremental"
        # (only GPipe's rows of them, made again: kg.analytics.changes)
        assert report.answers == {} and set(report.patched) == {"bibliography", "lineage-papers"}
        found, rows = _rows(store, "bibliography", {}, analytics=True)
        assert found.source == "duckdb"
        doi = found.page.variables.index("doi")
        assert "10.9999/kg-test" in {r[doi].value for r in rows if r[doi] is not None}
        _, kept = _rows(store, "lineage-nodes", {}, analytics=True)
        _, sparql = _rows(store, "lineage-nodes", {}, analytics=False)
        assert len(kept) == len(sparql)


def test_papers_by_author_from_the_tables_follows_author_lists_then_creators(analysed_store) -> None:
    """A paper's ordered author list names its authors (its creators then do not count); a
    paper without one is found through its creators; a sole author has no co-authors."""
    import pyoxigraph as ox

    from kg.analytics import build, database_path
    from kg.graphs import graph_iri
    from kg.iris import person_iri
    from kg.vocab import BIBO, DCTERMS, FOAF, RDF

    def person(name: str) -> list[ox.Triple]:
        return [ox.Triple(person_iri(name), RDF.type, FOAF.Person),
                ox.Triple(person_iri(name), FOAF.name, ox.Literal(name))]

    listed, created, alone = (ox.NamedNode(f"https://example.org/paper/{n}") for n in ("listed", "created", "alone"))
    triples = [t for name in ("Quill Zebedee", "Rook Yarrow", "Sable Xu", "Tern Wick") for t in person(name)]
    for paper, title in ((listed, "With a list"), (created, "Creators only"), (alone, "On my own")):
        triples += [ox.Triple(paper, RDF.type, BIBO.Document), ox.Triple(paper, DCTERMS.title, ox.Literal(title))]
    triples += [ox.Triple(listed, BIBO.authorList, ox.NamedNode(listed.value + "#a")),
                ox.Triple(ox.NamedNode(listed.value + "#a"), RDF["_1"], person_iri("Quill Zebedee")),
                ox.Triple(ox.NamedNode(listed.value + "#a"), RDF["_2"], person_iri("Rook Yarrow")),
                ox.Triple(listed, DCTERMS.creator, person_iri("Sable Xu")),  # not counted: the list says who
                ox.Triple(listed, DCTERMS.creator, person_iri("Quill Zebedee")),
                ox.Triple(created, DCTERMS.creator, person_iri("Quill Zebedee")),
                ox.Triple(created, DCTERMS.creator, person_iri("Tern Wick")),
                ox.Triple(alone, BIBO.authorList, ox.NamedNode(alone.value + "#a")),
                ox.Triple(ox.NamedNode(alone.value + "#a"), RDF["_1"], person_iri("Quill Zebedee"))]
    with analysed_store.transaction("test") as tx:
        tx.replace_graph(graph_iri("import/people"), triples)
    build(analysed_store, database_path(analysed_store.location))
    for author, expected in (("QUILL", {("With a list", "Rook Yarrow"), ("Creators only", "Tern Wick"),
                                        ("On my own", None)}),
                             ("sable", set())):
        twin, ours = _rows(analysed_store, "papers-by-author", {"author": author}, analytics=True)
        sparql, theirs = _rows(analysed_store, "papers-by-author", {"author": author}, analytics=False)
        assert twin.source == "duckdb" and sparql.source == "sparql"
        assert ours == theirs
        at = [twin.page.variables.index(v) for v in ("title", "coauthors")]
        assert {tuple(None if row[i] is None else row[i].value for i in at) for row in ours} == expected
