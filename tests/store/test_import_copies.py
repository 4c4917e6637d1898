"""Import copies (kg.store.copies): after a first load and after a replacement the copy
holds exactly the graph; any write that may touch the graph drops it first, writes to
other graphs keep it; a load killed at any point leaves no copy or a true one; and a
replacement that reads the old content from the copy gives the graph a dump would."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.graphs import PROVENANCE, READING, graph_iri
from kg.store import bulk
from kg.store.base import Activity
from kg.store.copies import canonical_lines, update_may_write
from kg.store.embedded import OxigraphStore
from tests.store.processes import kill_at

EX = "http://example.org/"
G = graph_iri("import/copy-test")
OTHER = graph_iri("import/other")
NT = ox.RdfFormat.N_TRIPLES
XSD = "http://www.w3.org/2001/XMLSchema#"

#: Lines that are N-Triples but not in the store's own form, beside ones that are.
ODD = (
    f'<{EX}a>   <{EX}p>\t"spaced" .\n'
    f'<{EX}a> <{EX}p> "\\u0041\\u00e9 \\\'q\\\'" .\n'
    f'<{EX}a> <{EX}n> "01"^^<{XSD}integer> .\n'
    f'<{EX}a> <{EX}n> "+5"^^<{XSD}int> .\n'
    f'<{EX}a> <{EX}d> "2026-01-01T24:00:00Z"^^<{XSD}dateTime> .\n'
    f'<{EX}a> <{EX}s> "plain"^^<{XSD}string> .\n'
    f'<{EX}a> <{EX}l> "tagged"@EN-GB .\n'
    f'<{EX}a> <{EX}c> "tab\tand\x7fdel" .\n'
    "# a comment\n\n"
    f'<{EX}a> <{EX}p> "kept" .  # trailing comment\r\n'
    f'<{EX}a> <{EX}n> "1"^^<{XSD}integer> .\n'
)


def _write(path: Path, items: range, *, title: str = "t", blank: bool = True, odd: bool = False) -> Path:
    lines = [f'<{EX}s{i}> <{EX}title> "{title} {i}" .\n<{EX}s{i}> <{EX}n> "{i}"^^<{XSD}integer> .\n' for i in items]
    if blank:
        lines.append(f'_:x <{EX}about> <{EX}s0> .\n_:x <{EX}note> "{title} note" .\n_:y <{EX}about> _:x .\n')
    if odd:
        lines.append(ODD)
    lines.append(lines[0])  # a line twice: copied twice, counted once
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _load(store: OxigraphStore, path: Path, graph: ox.NamedNode = G, fmt: ox.RdfFormat = NT) -> int:
    return store.load_file(path, graph=graph, fmt=fmt, gzipped=False, activity=Activity("kg import rdf"))


def _graph(store: OxigraphStore, graph: ox.NamedNode = G) -> set[ox.Triple]:
    quads = store._store.quads_for_pattern(None, None, None, graph)
    return {ox.Triple(q.subject, q.predicate, q.object) for q in quads}


def _copy_triples(path: Path) -> set[ox.Triple]:
    return {ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(path=str(path), format=NT)}


def _shape(triples: set[ox.Triple]) -> set[str]:
    """Triples with each blank node written as one placeholder (for copies whose labels are the file's)."""
    def term(t: object) -> str:
        return "_:b" if isinstance(t, ox.BlankNode) else str(t)
    return {f"{term(t.subject)} {t.predicate} {term(t.object)}" for t in triples}


def _assert_true_copy(store: OxigraphStore, graph: ox.NamedNode = G) -> None:
    """The copy, when there is one, holds exactly the graph (blank nodes up to their labels
    when the copy keeps the file's)."""
    copy = store.import_copy(graph)
    if copy is None:
        return
    text = copy.path.read_bytes()
    assert text.endswith(b"\n") and b"\n\n" not in text and not text.startswith((b"#", b"\n"))
    assert set(canonical_lines(text).splitlines()) == set(text.splitlines())  # each line in the store's own form
    lines, graph_triples = _copy_triples(copy.path), _graph(store, graph)
    if copy.blank_ids == "store":
        assert lines == graph_triples
    else:
        assert _shape(lines) == _shape(graph_triples)
    assert copy.triples == len(graph_triples)


def test_a_first_load_keeps_a_copy_equal_to_the_graph_in_the_stores_own_form(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(300), odd=True))
        copy = store.import_copy(G)
        assert copy is not None and copy.blank_ids == "file"  # the bulk loader renamed the blank nodes
        assert copy.path.is_relative_to(tmp_path / "store" / "copies")
        _assert_true_copy(store)
        assert _shape(_copy_triples(copy.path)) == _shape(_graph(store))
        text = copy.path.read_text(encoding="utf-8")
        assert f'<{EX}a> <{EX}n> "1"^^<{XSD}integer> .\n' in text and '"01"' not in text
        assert f'<{EX}a> <{EX}n> "5"^^<{XSD}integer> .\n' in text and '"tagged"@en-gb' in text


def test_a_first_load_without_blank_nodes_has_a_copy_with_the_stores_ids(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(50), blank=False))
        copy = store.import_copy(G)
        assert copy is not None and copy.blank_ids == "store"
        assert _copy_triples(copy.path) == _graph(store)


def test_a_turtle_load_is_copied_as_n_triples(tmp_path: Path) -> None:
    ttl = tmp_path / "v.ttl"
    ttl.write_text(f'@prefix ex: <{EX}> .\nex:a ex:p "x", "01"^^<{XSD}integer> ; ex:q [ ex:r ex:b ] .\n',
                   encoding="utf-8")
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, ttl, fmt=ox.RdfFormat.TURTLE)
        assert store.import_copy(G) is not None
        _assert_true_copy(store)


def test_the_provenance_of_a_load_is_the_same_with_or_without_a_copy(tmp_path: Path) -> None:
    source = _write(tmp_path / "v1.nt", range(120))
    recorded = []
    for path in (tmp_path / "store", None):
        with OxigraphStore(path) as store:
            _load(store, source)
            rows = store.select(f"SELECT ?h ?n WHERE {{ GRAPH {PROVENANCE} {{ {G} tkg:contentHash ?h ; "
                                "tkg:tripleCount ?n } }").rows
            recorded.append((rows[0]["h"], rows[0]["n"], len(_graph(store))))
    assert recorded[0] == recorded[1]
    assert int(recorded[0][1].value) == recorded[0][2]  # type: ignore[union-attr]


def test_a_replacement_keeps_a_copy_equal_to_the_graph_blank_nodes_and_all(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(200), title="old", odd=True))
        v2 = _write(tmp_path / "v2.nt", range(50, 260), title="new", odd=True)
        _load(store, v2)
        copy = store.import_copy(G)
        assert copy is not None and copy.blank_ids == "store"
        assert _copy_triples(copy.path) == _graph(store)  # the very blank-node ids of the store
        with OxigraphStore(None) as fresh:  # "01"^^xsd:integer in both: one triple, kept, not removed
            _load(fresh, v2)
            assert _shape(_graph(store)) == _shape(_graph(fresh))
        assert not any((tmp_path / "store" / bulk.WORK_FOLDER).iterdir())


def test_a_replacement_through_the_copy_gives_the_graph_a_dump_gives(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    with OxigraphStore(a) as store:
        _load(store, _write(tmp_path / "v1.nt", range(200), title="one", odd=True))
        _load(store, _write(tmp_path / "v2.nt", range(50, 260), title="two", odd=True))
    shutil.copytree(a, b)
    shutil.rmtree(b / "copies")  # the same store, blank-node ids included, without its copy
    olds: list[Path | None] = []
    real = bulk.diff

    def spy(*args: object, old_copy: Path | None = None, **rest: object) -> bulk.Diff:
        olds.append(old_copy)
        return real(*args, old_copy=old_copy, **rest)  # type: ignore[arg-type]

    monkeypatch.setattr(bulk, "diff", spy)
    v3 = _write(tmp_path / "v3.nt", range(100, 330), title="three", odd=True)
    graphs = []
    for path in (a, b):
        with OxigraphStore(path) as store:
            old_blanks = {t.subject for t in _graph(store) if isinstance(t.subject, ox.BlankNode)}
            _load(store, v3)
            graph = _graph(store)
            assert not old_blanks & {t.subject for t in graph}  # the old blank nodes are gone
            graphs.append(graph)
            _assert_true_copy(store)
    assert olds[0] is not None and olds[1] is None  # via the copy, then via the dump
    assert _shape(graphs[0]) == _shape(graphs[1])
    assert len({t.subject for t in graphs[0] if isinstance(t.subject, ox.BlankNode)}) == 2


def test_an_update_that_names_the_graph_drops_its_copy_and_one_naming_another_keeps_it(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(20)))
        _load(store, _write(tmp_path / "o.nt", range(5)), graph=OTHER)
        assert store.import_copy(OTHER) is not None
        store.update(f"INSERT DATA {{ GRAPH {OTHER} {{ <{EX}x> <{EX}p> <{EX}y> }} }}")
        assert store.import_copy(G) is not None and store.import_copy(OTHER) is None
        store.update(f"DELETE DATA {{ GRAPH {G} {{ <{EX}s1> <{EX}title> \"t 1\" }} }}")
        assert store.import_copy(G) is None and store.import_copy(OTHER) is None


@pytest.mark.parametrize("update", [
    "DELETE WHERE {{ GRAPH ?g {{ ?s <{ex}title> ?o }} }}",
    "PREFIX imp: <https://w3id.org/techkg/graph/import/> DELETE WHERE {{ GRAPH imp:copy-test {{ ?s ?p ?o }} }}",
    "DROP SILENT ALL",
    "CLEAR NAMED",
    "ADD DEFAULT TO <{other}>",
    "WITH {graph} DELETE {{ ?s ?p ?o }} WHERE {{ ?s ?p ?o }}",
])
def test_updates_that_may_write_the_graph_drop_its_copy(tmp_path: Path, update: str) -> None:
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(20)))
        store.update(update.format(ex=EX, other=OTHER.value, graph=G))
        assert store.import_copy(G) is None
        assert not list((tmp_path / "store" / "copies").rglob("*.nt"))


def test_which_updates_may_write_a_graph() -> None:
    graph = "https://w3id.org/techkg/graph/import/bench"
    prefixes = {"tkgg": "https://w3id.org/techkg/graph/"}
    writes = [
        f"INSERT DATA {{ GRAPH <{graph}> {{ <a:b> <a:c> <a:d> }} }}",
        "INSERT DATA { GRAPH tkgg:import\\/bench { <a:b> <a:c> <a:d> } }",
        "INSERT DATA { GRAPH tkgg:import/bench { <a:b> <a:c> <a:d> } }",
        "PREFIX i: <https://w3id.org/techkg/graph/import/> DROP GRAPH i:bench",
        "DELETE { GRAPH $g { ?s ?p ?o } } WHERE { GRAPH $g { ?s ?p ?o } }",
        "BASE <https://w3id.org/techkg/graph/import/> DROP GRAPH <bench>",
        "DROP GRAPH <https://w3id.org/techkg/graph/import/\\u0062ench>",
        "move default to <urn:x>",
    ]
    keeps = [
        "INSERT DATA { GRAPH tkgg:reading { <a:b> <a:c> \"a note on GRAPH ?g, DROP ALL\" } }",
        "INSERT DATA { GRAPH tkgg:import/bench2 { <a:b> <a:c> <a:d> } }",
        "DELETE WHERE { GRAPH tkgg:reading { <a:b> ?p ?o } }",
        f"DROP GRAPH <{graph}2>",
    ]
    assert [q for q in writes if not update_may_write(q, graph, prefixes)] == []
    assert [q for q in keeps if update_may_write(q, graph, prefixes)] == []


def test_replacing_restoring_and_clearing_graphs_drop_their_copies(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(20)))
        store.replace_graphs({OTHER: [ox.Triple(ox.NamedNode(f"{EX}x"), ox.NamedNode(f"{EX}p"), ox.Literal("y"))]})
        assert store.import_copy(G) is not None
        store.replace_graphs({}, drop=[G])
        assert store.import_copy(G) is None and not _graph(store)


def test_kg_reading_set_keeps_the_copy_of_an_import_graph(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    source = _write(tmp_path / "copy-test.nt", range(40))
    kg_cli("import", "rdf", str(source), store=built_store_path, check=True)
    kg_cli("reading", "set", "GPipe", "read", store=built_store_path, check=True)
    with OxigraphStore(built_store_path) as store:
        assert store.count(READING) > 0
        assert store.import_copy(G) is not None
        _assert_true_copy(store)


def test_a_reader_gets_the_copy_its_view_describes(tmp_path: Path) -> None:
    path = tmp_path / "store"
    with OxigraphStore(path) as store:
        _load(store, _write(tmp_path / "v1.nt", range(30), blank=False))
    reader = OxigraphStore.open_reader(path)
    try:
        first = reader.import_copy(G)
        assert first is not None
        with OxigraphStore(path) as store:
            _load(store, _write(tmp_path / "v2.nt", range(10, 40), blank=False))
        assert reader.import_copy(G) is None  # its view still holds the first graph
        reader.refresh()
        now = reader.import_copy(G)
        assert now is not None and now.path != first.path and _copy_triples(now.path) == _graph(reader)
    finally:
        reader.close()


@pytest.mark.parametrize("point", ["store.loaded", "store.before-commit", "store.after-commit",
                                   "store.loaded-committed"])
def test_a_first_load_killed_at_each_point_leaves_no_copy_or_a_true_one(tmp_path: Path, point: str) -> None:
    path = tmp_path / "store"
    with OxigraphStore(path):
        pass
    source = _write(tmp_path / "copy-test.nt", range(500), odd=True)
    kill_at(point, "import", "rdf", str(source), store=path)
    with OxigraphStore(path) as store:
        _assert_true_copy(store)
        assert not list((path / "copies").rglob("tmp-*"))


@pytest.mark.parametrize("point", ["store.journalled", "store.before-commit", "store.after-commit",
                                   "store.replaced"])
def test_a_replacement_killed_at_each_point_leaves_no_copy_or_a_true_one(tmp_path: Path, point: str) -> None:
    path = tmp_path / "store"
    with OxigraphStore(path) as store:
        _load(store, _write(tmp_path / "v1.nt", range(300), title="old", odd=True))
    source = _write(tmp_path / "copy-test.nt", range(100, 400), title="new", odd=True)
    kill_at(point, "import", "rdf", str(source), store=path)
    with OxigraphStore(path) as store:  # the next open completes the journalled replacement
        _assert_true_copy(store)
        if point == "store.replaced":  # killed after the commit, before the copy: the retry writes it
            assert store.import_copy(G) is not None
        assert not list((path / "copies").rglob("tmp-*"))
        assert not any((path / bulk.WORK_FOLDER).iterdir())
