"""`kg analytics build` reads a graph that `kg import rdf` loaded whole from its import copy
(kg.store.copies) instead of the store: every table it makes is the one a build from the
store makes, row for row, and a copy made stale by a write is not read."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

AWKWARD = "https://w3id.org/techkg/graph/import/awkward"
BENCH = "https://w3id.org/techkg/graph/import/bench"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
B, D, F, S, T = ("http://purl.org/ontology/bibo/", "http://purl.org/dc/terms/", "http://xmlns.com/foaf/0.1/",
                 "http://www.w3.org/2004/02/skos/core#", "https://w3id.org/techkg/ns#")

#: Papers, people and a technique with awkward terms, as a user's N-Triples file may hold
#: them: escapes, non-ASCII, language tags, typed literals (some not in canonical form),
#: blank nodes (a document, author lists), list positions, literals holding a quote before
#: " ", "^^<" or "@", and lines written twice (a fact, a type, a label).
AWKWARD_NT = f"""\
<https://example.org/paper/é-1> <{RDF}type> <{B}Document> .
<https://example.org/paper/é-1> <{RDF}type> <{B}AcademicArticle> .
<https://example.org/paper/é-1> <{D}title> "Spaces, \\"quotes\\", back\\\\slash, a\\ttab,\\na line; 中文 ✓ 😀" .
<https://example.org/paper/é-1> <{D}issued> "2024-05-01"^^<{XSD}date> .
<https://example.org/paper/é-1> <{T}citationCount> "042"^^<{XSD}integer> .
<https://example.org/paper/é-1> <{T}venue> "NeurIPS \\u00E9dition" .
<https://example.org/paper/é-1> <{B}authorList> _:list1 .
<https://example.org/paper/é-1> <{D}creator> <https://example.org/person/1> .
_:list1 <{RDF}_1> <https://example.org/person/1> .
_:list1 <{RDF}_2> _:anon .
_:list1 <{RDF}_12> <https://example.org/person/2> .
_:anon <{RDF}type> <{F}Person> .
_:anon <{F}name> "Anonymous \\U0001F600" .
<https://example.org/person/1> <{RDF}type> <{F}Person> .
<https://example.org/person/1> <{F}name> "Ada \\\\u00E9 Lovelace" .
<https://example.org/person/2> <{RDF}type> <{F}Person> .
<https://example.org/person/2> <{F}name> "名前"@ja .
_:doc <{RDF}type> <{B}Document> .
_:doc <{D}title> "Ein Titel"@de-CH .
_:doc <{D}issued> "2023"^^<{XSD}gYear> .
_:doc <{T}stars> "+7"^^<{XSD}integer> .
_:doc <{B}authorList> _:list2 .
_:list2 <{RDF}_1> _:anon .
<https://example.org/technique/odd> <{RDF}type> <{T}Technique> .
<https://example.org/technique/odd> <{S}prefLabel> "Odd \\"one\\""@en .
<https://example.org/technique/odd> <{S}prefLabel> "奇怪"@zh-Hans .
<https://example.org/technique/odd> <{T}onComparisonPage> "1"^^<{XSD}boolean> .
<https://example.org/technique/odd> <{T}primaryPaper> <https://example.org/paper/é-1> .
<https://example.org/technique/odd> <{D}date> "2024-05"^^<{XSD}gYearMonth> .
<https://example.org/technique/odd> <{T}headlineResult> "1e3 × faster\\r\\n(\\b\\f)" .
<https://example.org/paper/é-1> <{B}authorList> _:list1 .
<https://example.org/paper/q> <{RDF}type> <{B}Document> .
<https://example.org/paper/q> <{D}title> "He said \\"x\\" ^^<{XSD}string> and \\"@en\\" \\" . \\" "@en-GB .
<https://example.org/paper/q> <{T}venue> "ends in a quote \\""^^<https://example.org/dt#venue> .
<https://example.org/paper/q> <{T}arxivId> "a\\"^^<x> \\"@zh" .
<https://example.org/paper/q> <{RDF}type> <{B}Document> .
<https://example.org/technique/odd> <{S}prefLabel> "奇怪"@zh-Hans .
"""


def _load(store: Any, path: Path, graph: str) -> None:
    import pyoxigraph as ox

    from kg.store.base import Activity

    store.load_file(path, graph=ox.NamedNode(graph), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                    activity=Activity("kg import rdf", used=[str(path)]))


@pytest.fixture(scope="module")
def copied_store_dir(built_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The catalog, a small corpus in ``bench`` and the awkward graph, both loaded whole
    (so both have import copies)."""
    from bench.corpus import generate
    from kg.store.embedded import OxigraphStore

    root = tmp_path_factory.mktemp("copies")
    path = root / "store"
    shutil.copytree(built_store_dir, path)
    corpus = generate(150, seed=7, out=root / "corpus.nt")
    awkward = root / "awkward.nt"
    awkward.write_text(AWKWARD_NT, encoding="utf-8")
    store = OxigraphStore(path)
    try:
        _load(store, corpus.path, BENCH)
        _load(store, awkward, AWKWARD)
    finally:
        store.close()
    return path


def _masked(value: Any) -> Any:
    """A blank node's label is the store's own in one build and the file's in the other."""
    if isinstance(value, str) and value.startswith("_:"):
        return "_:"
    if isinstance(value, list):
        return sorted((_masked(v) for v in value), key=repr)
    return value


#: Record tables whose rows say when and how a build ran, not what the graph holds.
_RECORDS = {("staging", "graphs"), ("main", "graphs"), ("staging", "meta"), ("main", "builds"),
            ("main", "materialisations")}


def _tables(db: Path) -> dict[tuple[str, str], tuple[list[Any], int]]:
    """Every table of the analytics file: its rows (blank labels masked) in a fixed order,
    and how many blank-node labels it holds."""
    from kg.analytics import connect

    con = connect(db, read_only=True)
    try:
        names = con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()
        out = {}
        for schema, table in names:
            if (schema, table) in _RECORDS:
                continue
            rows = con.execute(f'SELECT * FROM "{schema}"."{table}"').fetchall()
            blanks = {v for row in rows for v in row if isinstance(v, str) and v.startswith("_:")}
            out[(schema, table)] = (sorted((tuple(_masked(v) for v in row) for row in rows), key=repr), len(blanks))
        return out
    finally:
        con.close()


def _assert_same_tables(got: Path, expected: Path) -> None:
    mine, theirs = _tables(got), _tables(expected)
    assert set(mine) == set(theirs)
    for name in theirs:
        assert mine[name] == theirs[name], name


def _invalidate(store: Any, graph: str) -> None:
    """A write that names the graph but changes nothing: the copy is dropped, the graph is not."""
    store.update(f"DELETE DATA {{ GRAPH <{graph}> {{ <urn:x:nothing> <urn:x:nothing> <urn:x:nothing> }} }}")


def test_tables_built_from_import_copies_equal_tables_built_from_the_store(
    copied_store_dir: Path, tmp_path: Path
) -> None:
    import pyoxigraph as ox

    from kg.analytics import build
    from kg.store.embedded import OxigraphStore

    path = tmp_path / "store"
    shutil.copytree(copied_store_dir, path)
    store = OxigraphStore(path)
    try:
        assert store.import_copy(ox.NamedNode(AWKWARD)) is not None
        steps: list[tuple[int, int]] = []

        def progress(step: str, done: int, total: int) -> None:
            if step == "staging":
                steps.append((done, total))

        from_copies = build(store, tmp_path / "copies.duckdb", progress=progress)
        for graph in (BENCH, AWKWARD):
            _invalidate(store, graph)
            assert store.import_copy(ox.NamedNode(graph)) is None
        from_store = build(store, tmp_path / "store.duckdb")
    finally:
        store.close()
    assert sorted(from_copies.from_copies) == ["import/awkward", "import/bench"]
    assert from_store.from_copies == []
    assert from_copies.staged_facts == from_store.staged_facts
    # staging's progress moves forward to its end, the copies included
    assert steps[0][0] == 0 and steps[-1][0] == steps[-1][1] and len({t for _, t in steps}) == 1
    assert [d for d, _ in steps] == sorted(d for d, _ in steps) and len(steps) >= 4
    _assert_same_tables(tmp_path / "copies.duckdb", tmp_path / "store.duckdb")
    # the awkward graph's terms reached the tables (the comparison would pass on empty tables)
    tables = _tables(tmp_path / "copies.duckdb")
    titles = {v for row in tables[("main", "papers")][0] for v in row if isinstance(v, str)}
    assert 'Spaces, "quotes", back\\slash, a\ttab,\na line; 中文 ✓ 😀' in titles


def test_a_graph_changed_since_its_copy_is_read_from_the_store(copied_store_dir: Path, tmp_path: Path) -> None:
    import pyoxigraph as ox

    from kg.analytics import build
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore

    path = tmp_path / "store"
    shutil.copytree(copied_store_dir, path)
    store = OxigraphStore(path)
    try:
        build(store, tmp_path / "incremental.duckdb")
        paper, title = ox.NamedNode("https://example.org/paper/é-1"), ox.NamedNode(D + "title")
        with store.transaction(Activity("kg edit")) as tx:
            tx.insert(ox.NamedNode(AWKWARD), [ox.Triple(paper, title, ox.Literal('A new "title"\\'))])
        assert store.import_copy(ox.NamedNode(AWKWARD)) is None
        again = build(store, tmp_path / "incremental.duckdb")
        fresh = build(store, tmp_path / "fresh.duckdb")
    finally:
        store.close()
    assert again.mode == "incremental" and again.changed_graphs == ["import/awkward"]
    assert again.from_copies == []
    assert fresh.from_copies == ["import/bench"]
    _assert_same_tables(tmp_path / "incremental.duckdb", tmp_path / "fresh.duckdb")


def _expected(line: str) -> tuple[str, str, str | None]:
    """A copy line's subject, object value and datatype marker, as pyoxigraph reads it."""
    import pyoxigraph as ox

    (triple,) = ox.parse(line.encode(), format=ox.RdfFormat.N_TRIPLES)
    s = triple.subject
    o = triple.object
    subject = f"_:{s.value}" if isinstance(s, ox.BlankNode) else s.value
    if isinstance(o, ox.NamedNode):
        return subject, o.value, None
    if isinstance(o, ox.BlankNode):
        return subject, f"_:{o.value}", "_"
    assert isinstance(o, ox.Literal)
    if o.language:
        return subject, o.value, "@" + o.language
    return subject, o.value, "" if o.datatype.value == XSD + "string" else o.datatype.value


def test_copy_lines_are_taken_apart_as_an_n_triples_parser_reads_them() -> None:
    """Each line of a copy (in the store's form) gives the subject, value and datatype or
    language that pyoxigraph parses from it, whatever quotes, ``^^<``, ``@``, spaces or
    escapes a literal holds."""
    from kg.analytics.copyrows import parse
    from kg.analytics.staging import _copy_predicates
    from kg.store.copies import canonical_lines

    texts = ['plain', 'sp ace "q" . end', 'x" ^^<http://e.org/t>', '"@en', 'ends "', 'a\\b\tc\nd',
             '中文 ✓ 😀 "^^<', '', ' ', '"', '^^', '@zh']
    objects = [f"<https://example.org/é/{i}>" for i in range(2)] + ["_:b0"]
    for i, text in enumerate(texts):
        quoted = '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n") + '"'
        objects += [quoted, quoted + "@en-GB", quoted + "@zh-Hans", f"{quoted}^^<https://example.org/dt{i}>",
                    quoted + f"^^<{XSD}date>"]
    nt = "".join(f"<https://example.org/s{i}> <{D}title> {o} .\n" for i, o in enumerate(objects))
    nt += f"_:s <{S}prefLabel> \"标签\"@zh .\n_:s <{S}prefLabel> <https://example.org/not-a-label> .\n"
    nt += f"_:s <{RDF}_7> _:b0 .\n_:s <{RDF}type> <{B}Document> .\n_:s <urn:x:unread> \"x\" .\n"
    lines = canonical_lines(nt.encode()).decode().splitlines()
    import pyarrow as pa

    facts, types = parse(pa.array(lines), _copy_predicates())
    got = list(zip(*(facts.column(c).to_pylist() for c in ("s", "o", "d")), strict=True))
    staged = [line for line in lines if "<urn:x:unread>" not in line and "#type>" not in line
              and "not-a-label" not in line]
    assert got == [_expected(line) for line in staged]
    keyed = sorted(zip(facts.column("k").to_pylist(), facts.column("n").to_pylist(), strict=True), key=repr)
    assert keyed == sorted([("dcterms:title", None)] * len(objects) + [("skos:prefLabel@zh", None), ("rdf:_n", 7)],
                           key=repr)
    assert types.to_pylist() == [{"s": "_:s", "o": B + "Document", "d": None}]


def test_only_rows_equal_in_every_column_count_as_repeats(tmp_path: Path) -> None:
    """A copy's repeated line is staged once: rows that differ in any column (an empty
    string against no datatype, a position against none) are all kept."""
    from kg.analytics.materialize import connect, session
    from kg.analytics.staging import _drop_repeats

    con = connect(tmp_path / "a.duckdb", read_only=False)
    session(con)
    con.execute("CREATE SCHEMA staging")
    con.execute("CREATE TABLE staging.facts (g INTEGER, s VARCHAR, k VARCHAR, o VARCHAR, n INTEGER, d VARCHAR)")
    rows = [(1, "s", "k", "o", None, None), (1, "s", "k", "o", None, ""), (1, "s", "k", "o", 1, None),
            (1, "s", "k", "o", None, None), (1, "s", "k", "o", None, None), (1, "s", "k", None, None, None),
            (1, "s", "k", None, None, None), (2, "s", "k", "o", None, None)]
    con.execute("BEGIN")
    con.executemany("INSERT INTO staging.facts VALUES (?, ?, ?, ?, ?, ?)", rows)
    assert _drop_repeats(con, 1, "staging.facts") == 3
    con.execute("COMMIT")
    left = con.execute("SELECT * FROM staging.facts").fetchall()
    con.close()
    assert sorted(left, key=repr) == sorted(set(rows), key=repr)


def test_the_builds_sql_resolves_escapes_as_the_copy_reader_does() -> None:
    """kg_value (the macros of kg.analytics.schema, for literals the store writes as TSV)
    and kg.analytics.copyrows.unescape (for an import copy) give the same text for every
    N-Triples escape, a lone backslash and text around them."""
    import duckdb

    from kg.analytics.copyrows import unescape
    from kg.analytics.schema import MACROS

    bodies = ["plain", "a\\tb", 'quote \\" here', "back\\\\slash", "\\\\n is no newline", "\\u00E9t\\u00E9",
              "\\U0001F600 smile", "end\\\\", "trailing\\", "\\x is kept", "it\\'s", "mixed \\\\\\\" \\u0041\\n",
              "ünïcödé \\u4e2d", "", "a\\\nb", "\\b\\f\\r"]
    con = duckdb.connect()
    con.execute(MACROS)
    for body in bodies:
        assert con.execute("SELECT kg_value(?)", [f'"{body}"']).fetchall()[0][0] == unescape(body), body
    assert unescape("\\u00E9\\t\\\\") == "é\t\\"  # (and the copy reader resolves them at all)
