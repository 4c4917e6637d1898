"""`load_file` on the embedded store (kg.store.bulk): a first load records its digest and
distinct triple count without a second pass; a replacement applies only the difference
and, killed at any point, leaves the old graph or (completed at the next open) the new."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from kg.errors import RDFImportError
from kg.graphs import graph_iri
from kg.store import bulk
from kg.store.base import Activity, Progress
from kg.store.embedded import OxigraphStore

EX = "http://example.org/"
G = graph_iri("bulk-test")
NT = ox.RdfFormat.N_TRIPLES


def _write(path: Path, items: range, *, title: str = "t", blank: bool = True, duplicate: bool = False) -> Path:
    number = "http://www.w3.org/2001/XMLSchema#integer"
    lines = [f'<{EX}s{i}> <{EX}title> "{title} {i}" .\n<{EX}s{i}> <{EX}n> "{i}"^^<{number}> .\n' for i in items]
    if blank:  # one blank node with two triples: one node, before and after a retry
        lines.append(f'_:x <{EX}about> <{EX}s0> .\n_:x <{EX}note> "{title} note" .\n')
    if duplicate:
        lines.append(lines[0])
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _content(store: OxigraphStore) -> set[str]:
    """The graph as comparable lines, blank nodes replaced by a placeholder."""
    out = set()
    for q in store._store.quads_for_pattern(None, None, None, G):
        s = "_:b" if isinstance(q.subject, ox.BlankNode) else str(q.subject)
        o = "_:b" if isinstance(q.object, ox.BlankNode) else str(q.object)
        out.add(f"{s} {q.predicate} {o}")
    return out


def _blank_nodes(store: OxigraphStore) -> int:
    rows = store.select(f"SELECT (COUNT(DISTINCT ?b) AS ?n) WHERE {{ GRAPH {G} {{ ?b <{EX}note> ?o }} }}")
    return int(rows.rows[0]["n"].value)  # type: ignore[union-attr]


def _load(store: OxigraphStore, path: Path, gzipped: bool = False) -> int:
    return store.load_file(path, graph=G, fmt=NT, gzipped=gzipped, activity=Activity("kg import rdf"))


def _recorded(store: OxigraphStore) -> tuple[str, int]:
    rows = store.select(f"SELECT ?h ?n WHERE {{ GRAPH <https://w3id.org/techkg/graph/provenance> {{ "
                        f"{G} tkg:contentHash ?h ; tkg:tripleCount ?n }} }}")
    row = rows.rows[0]
    return row["h"].value, int(row["n"].value)  # type: ignore[union-attr]


def test_a_first_load_records_the_file_digest_and_its_distinct_triples(tmp_path: Path) -> None:
    data = _write(tmp_path / "a.nt", range(500), duplicate=True)
    with OxigraphStore(tmp_path / "store") as store:
        assert _load(store, data) == 1002 == store.count(G)  # the duplicate line counts once
        assert _recorded(store) == ("file:" + hashlib.sha256(data.read_bytes()).hexdigest(), 1002)
    packed = tmp_path / "b.nt.gz"
    packed.write_bytes(gzip.compress(data.read_bytes()))
    with OxigraphStore(tmp_path / "store2") as store:
        assert _load(store, packed, gzipped=True) == 1002
        assert _recorded(store)[0] == "file:" + hashlib.sha256(packed.read_bytes()).hexdigest()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux schedules each thread with its own priority")
def test_the_count_beside_the_loader_works_at_the_lowest_priority_and_the_loader_at_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import threading

    seen: list[int] = []
    counted = bulk.FileFacts._run

    def run(self: bulk.FileFacts) -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        counted(self)

    monkeypatch.setattr(bulk.FileFacts, "_run", run)
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    with OxigraphStore(tmp_path / "store") as store:
        assert _load(store, _write(tmp_path / "a.nt", range(50))) == 102
    assert seen == [19]  # it takes the cores the loader leaves idle (700k papers: 3.9 s faster)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


def test_the_count_beside_the_loader_leaves_out_comments_and_blank_lines_across_blocks(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    """The thread splits the file in blocks and the lines with builtins: a statement cut by
    a block boundary counts once, and comments, blank and indented lines and CRLF line
    ends count as the loader reads them."""
    monkeypatch.setattr(bulk, "BLOCK", 7)
    data = tmp_path / "mixed.nt"
    data.write_bytes(b"# a comment\n" + f"<{EX}a> <{EX}p> <{EX}b> .\r\n\n".encode()
                     + f"   <{EX}a> <{EX}p> <{EX}b> .  \n\t# indented comment\n".encode()
                     + f'<{EX}a> <{EX}p> "x # not a comment" .\n<{EX}a> <{EX}p> <{EX}c> .'.encode())
    with OxigraphStore(tmp_path / "store") as store:
        assert _load(store, data) == 3 == store.count(G)
        assert _recorded(store) == ("file:" + hashlib.sha256(data.read_bytes()).hexdigest(), 3)


def test_a_replacement_applies_only_the_difference(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(300)))
        activity = Activity("kg import rdf")
        count = store.load_file(_write(tmp_path / "v2.nt", range(100, 400)), graph=G, fmt=NT, gzipped=False,
                                activity=activity)
        assert count == 602
        # 100 subjects gone and 100 new (2 triples each), the blank node's 2 triples renewed
        assert activity.stats["removed"] == 202 and activity.stats["added"] == 202
        with OxigraphStore(None) as fresh:
            _load(fresh, tmp_path / "v2.nt")
            assert _content(store) == _content(fresh)
        assert _blank_nodes(store) == 1
        assert _recorded(store)[1] == 602
        assert not (tmp_path / "store" / bulk.WORK_FOLDER).exists() or not any(
            (tmp_path / "store" / bulk.WORK_FOLDER).iterdir())


def test_a_replacement_removes_literals_of_every_shape_across_batches(tmp_path: Path, monkeypatch) -> None:
    """The removed triples go into DELETE DATA as the dump wrote them (unparsed): escapes,
    language tags, datatypes, non-ASCII, and "_:" inside a literal (no blank node) must all
    match what the store holds, batch after batch, while the loader adds the new ones."""
    monkeypatch.setattr(bulk, "DELETE_BATCH", 7)
    odd = ['"line\\nbreak \\"quoted\\" tab\\t"', '"Grüße, 東京"@de', '"_:not-a-node"',
           '"3.5"^^<http://www.w3.org/2001/XMLSchema#decimal>', '"back\\\\slash"', '""']
    old = tmp_path / "v1.nt"
    old.write_text("".join(f"<{EX}s{i}> <{EX}p{j}> {lit} .\n" for i in range(5) for j, lit in enumerate(odd))
                   + f"_:b <{EX}note> \"old note\" .\n", encoding="utf-8")
    new = _write(tmp_path / "v2.nt", range(40), title="new")
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, old)
        assert store.count(G) == 31
        activity = Activity("kg import rdf")
        store.load_file(new, graph=G, fmt=NT, gzipped=False, activity=activity)
        assert activity.stats["removed"] == 31
        with OxigraphStore(None) as fresh:
            _load(fresh, new)
            assert _content(store) == _content(fresh)


def test_a_malformed_replacement_leaves_the_old_graph_and_no_work_behind(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(50)))
        before = _content(store)
        bad = tmp_path / "bad.nt"
        bad.write_text((tmp_path / "v1.nt").read_text() + "<broken line\n", encoding="utf-8")
        with pytest.raises(RDFImportError, match="bad.nt"):
            _load(store, bad)
        assert _content(store) == before
    assert not any((tmp_path / "store" / bulk.WORK_FOLDER).iterdir())


def test_a_replacement_reads_any_n_triples_as_a_first_load_does_across_blocks(tmp_path: Path, monkeypatch) -> None:
    """A replacement takes N-Triples a block of lines at a time, copying lines already in
    the store's form and parsing the others: lines cut by block boundaries, non-canonical
    terms, comments, CRLF, blank nodes and "_:" inside literals give the graph that a
    first load of the same file gives."""
    monkeypatch.setattr(bulk, "BLOCK", 64)
    integer = "http://www.w3.org/2001/XMLSchema#integer"
    new = tmp_path / "v2.nt"
    new.write_bytes("".join(
        f'<{EX}s{i}> <{EX}n> "0{i}"^^<{integer}> .\r\n'  # "01" is stored as 1
        f'   <{EX}s{i}>   <{EX}title> "_:not a node {i}"@en .\n# a comment\n\n'
        f'_:b{i % 3} <{EX}about> <{EX}s{i}> .\n'
        f'<{EX}s{i}> <{EX}seeAlso> _:b{i % 3} .\n' for i in range(30)).encode())
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(20)))
        assert _load(store, new) == 120
        with OxigraphStore(None) as fresh:
            assert _load(fresh, new) == 120
            assert _content(store) == _content(fresh)
        # three blank nodes, each one node in every triple that names it
        assert store.select(f"SELECT (COUNT(DISTINCT ?b) AS ?n) WHERE {{ GRAPH {G} {{ ?b <{EX}about> ?s . "
                            f"?s <{EX}seeAlso> ?b }} }}").rows[0]["n"].value == "3"  # type: ignore[union-attr]


def test_a_malformed_replacement_says_which_line_of_the_file_is_wrong(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(bulk, "BLOCK", 64)
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(50)))
        for name, broken in (("plain", f'<{EX}s> <{EX}p> "no end .'), ("blank", f"_:b <{EX}p> <broken")):
            bad = tmp_path / f"{name}.nt"
            bad.write_text((tmp_path / "v1.nt").read_text() + broken + "\n" + f"<{EX}a> <{EX}p> <{EX}b> .\n",
                           encoding="utf-8")
            with pytest.raises(RDFImportError, match=r"line 103\b"):
                _load(store, bad)


def test_a_load_and_a_replacement_tell_how_far_each_step_has_come(tmp_path: Path) -> None:
    def told(seen: list[tuple[str, int, int]]) -> Progress:
        return lambda step, done, total: seen.append((step, done, total))

    first: list[tuple[str, int, int]] = []
    again: list[tuple[str, int, int]] = []
    with OxigraphStore(tmp_path / "store") as store:
        store.load_file(_write(tmp_path / "v1.nt", range(3000)), graph=G, fmt=NT, gzipped=False,
                        activity=Activity("kg import rdf"), progress=told(first))
        store.load_file(_write(tmp_path / "v2.nt", range(1000, 4000)), graph=G, fmt=NT, gzipped=False,
                        activity=Activity("kg import rdf"), progress=told(again))
    last = {step: (done, total) for step, done, total in first}
    assert last == {"reading": (last["reading"][1], last["reading"][1]), "loading": (6002, 6002)}
    steps = [step for step, _, _ in again]
    assert sorted(set(steps), key=steps.index) == ["reading", "comparing", "adding", "removing"]
    last = {step: (done, total) for step, done, total in again}
    assert last["removing"] == (2002, 2002) and last["adding"] == (2002, 2002)  # 1,000 subjects and a blank node
    assert last["comparing"] == (1, 1)
    assert last["reading"][0] == last["reading"][1] > 0
    assert all(done <= total or not total for _, done, total in again)

class _Flushes:
    """A store whose flushes are counted (and made slow when ``slow``): the rest is the real one."""

    def __init__(self, store: ox.Store, slow: bool) -> None:
        self.store, self.slow, self.flushes = store, slow, 0

    def flush(self) -> None:
        self.flushes += 1
        self.store.flush()
        if self.slow:
            import time

            time.sleep(0.6)

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)


@pytest.mark.parametrize("slow", [False, True])
def test_removals_flush_the_memtables_at_intervals_until_a_flush_has_to_wait(tmp_path: Path, monkeypatch,
                                                                             slow: bool) -> None:
    monkeypatch.setattr(bulk, "DELETE_BATCH", 10)
    monkeypatch.setattr(bulk, "FLUSH_EVERY", 50)
    monkeypatch.setattr(bulk, "FLUSH_WAITED", 0.5)
    with OxigraphStore(tmp_path / "store") as store:
        _load(store, _write(tmp_path / "v1.nt", range(150), blank=False))
        removed = tmp_path / "removed.nt"
        removed.write_text((tmp_path / "v1.nt").read_text(), encoding="utf-8")
        counted = _Flushes(store._store, slow)
        bulk.remove_lines(counted, G, removed)  # type: ignore[arg-type]
        assert store.count(G) == 0
        # 300 removals, a flush every 50; none after the first that waited
        assert counted.flushes == (1 if slow else 6)


#: A child that replaces the graph and is killed (os._exit) at a chosen point.
_KILLED = """
import os, sys
from pathlib import Path
import pyoxigraph as ox
from kg.graphs import graph_iri
from kg.store import bulk
from kg.store.base import Activity, Progress
from kg.store.embedded import OxigraphStore

where = sys.argv[3]
real_apply, real_journal, real_remove = bulk.apply, bulk.write_journal, bulk.remove_lines

def journal(change, provenance, activity):
    if where == "before-journal":
        os._exit(9)
    real_journal(change, provenance, activity)
    if where == "after-journal":
        os._exit(9)

def remove(store, graph, removed, *rest):
    real_remove(store, graph, removed, *rest)
    if where == "after-removals":
        store.flush()
        os._exit(9)

def apply(store, folder, update, installed=None, progress=None):
    if where == "after-additions":
        bulk.remove_lines(store, ox.NamedNode(sys.argv[4]), folder / "removed.nt")
        store.bulk_load(path=str(folder / "added.nt"), format=ox.RdfFormat.N_TRIPLES,
                        to_graph=ox.NamedNode(sys.argv[4]))
        store.extend(ox.Quad(t.subject, t.predicate, t.object, ox.NamedNode(sys.argv[4]))
                     for t in ox.parse(path=str(folder / "added-blank-nodes.nt"), format=ox.RdfFormat.N_TRIPLES))
        store.flush()
        os._exit(9)
    real_apply(store, folder, update, installed, progress)

bulk.write_journal, bulk.remove_lines, bulk.apply = journal, remove, apply
store = OxigraphStore(Path(sys.argv[1]))
store.load_file(Path(sys.argv[2]), graph=ox.NamedNode(sys.argv[4]), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                activity=Activity("kg import rdf"))
"""


@pytest.mark.parametrize("where", ["before-journal", "after-journal", "after-removals", "after-additions"])
def test_a_killed_replacement_leaves_the_old_graph_or_the_next_open_completes_the_new(tmp_path: Path,
                                                                                      where: str) -> None:
    path = tmp_path / "store"
    with OxigraphStore(path) as store:
        _load(store, _write(tmp_path / "v1.nt", range(200), title="old"))
        old = _content(store)
    new_file = _write(tmp_path / "v2.nt", range(50, 260), title="new")
    with OxigraphStore(None) as fresh:
        _load(fresh, new_file)
        new = _content(fresh)
    child = subprocess.run([sys.executable, "-c", _KILLED, str(path), str(new_file), where, G.value],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 9, child.stderr
    with OxigraphStore(path) as store:  # the next open finishes what was journalled
        assert _content(store) == (old if where == "before-journal" else new)
        assert _blank_nodes(store) == 1
        if where != "before-journal":
            assert _recorded(store)[1] == len(new)
    assert not any((path / bulk.WORK_FOLDER).iterdir())


# -- caps on what an import may grow to: every input path ------------------------------------------


def _bomb(path: Path, mib: int) -> Path:
    """``mib`` MiB of N-Triples lines, gzipped to a few hundred KB."""
    line = b'<http://example.org/s> <http://example.org/p> "' + b"z" * 200 + b'" .\n'
    with gzip.open(path, "wb", compresslevel=9) as out:
        for _ in range((mib << 20) // len(line) + 1):
            out.write(line)
    return path


def _big_literal(path: Path, mib: float) -> Path:
    body = "w" * int(mib * (1 << 20))
    opener = gzip.open if path.suffix == ".gz" else open
    syntax = path.name.split(".")[1]
    text = {"nt": f'<http://example.org/a> <http://example.org/p> "{body}" .\n',
            "ttl": f'<http://example.org/a> <http://example.org/p> """{body}\n""" .\n',
            "jsonld": f'{{"@id": "http://example.org/a", "http://example.org/p": "{body}"}}',
            "rdf": '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
                   f'rdf:about="http://example.org/a"><p xmlns="http://example.org/">{body}</p>'
                   '</rdf:Description></rdf:RDF>\n'}[syntax]
    with opener(path, "wt", encoding="utf-8") as out:  # type: ignore[operator]
        out.write(text)
    return path


@pytest.mark.parametrize("backend", ["embedded", "remote"])
def test_no_import_path_reads_past_the_caps(backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decompression bomb and an oversized literal (each syntax, plain and gzipped) are
    refused with a message on a first load, a replacement and an upload to a server; the
    graph is left as it was."""
    from kg.inputlimits import InputTooLarge
    from kg.store.remote import RemoteStore
    from tests.servers import oxigraph_server

    monkeypatch.setenv("KG_MAX_DECOMPRESSED_MIB", "4")
    monkeypatch.setenv("KG_MAX_LITERAL_MIB", "1")
    files = [_bomb(tmp_path / "bomb.nt.gz", 8)] + [
        _big_literal(tmp_path / f"lit.{syntax}", 1.5) for syntax in ("nt", "ttl", "jsonld", "rdf")] + [
        _big_literal(tmp_path / f"lit.{syntax}.gz", 1.5) for syntax in ("nt", "ttl")]
    small = _write(tmp_path / "small.nt", range(5), blank=False)
    with contextlib.ExitStack() as stack:
        if backend == "embedded":
            store: Any = stack.enter_context(OxigraphStore(tmp_path / "store"))
        else:
            store = stack.enter_context(RemoteStore.from_spec(stack.enter_context(oxigraph_server()).spec))
        from kg.cli.importing import rdf_format

        for graph in (graph_iri("import/empty"), graph_iri("import/full")):
            if graph.value.endswith("full"):
                store.load_file(small, graph=graph, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False, activity=Activity("t"))
            before = sorted(str(t) for t in store.triples(graph))
            for path in files:
                fmt, gzipped = rdf_format(path, None)
                with pytest.raises(InputTooLarge) as refused:
                    store.load_file(path, graph=graph, fmt=fmt, gzipped=gzipped, activity=Activity("t"))
                assert "KG_MAX_" in refused.value.hint and "Nothing was changed" in refused.value.hint, path
                assert sorted(str(t) for t in store.triples(graph)) == before, (path, graph)
    monkeypatch.delenv("KG_MAX_LITERAL_MIB")  # pyoxigraph's own limit on one token: a message too
    with OxigraphStore(tmp_path / "store2") as store2:
        with pytest.raises(InputTooLarge, match="too large for the RDF parser"):
            store2.load_file(_big_literal(tmp_path / "huge.nt", 17), graph=graph_iri("import/huge"),
                             fmt=ox.RdfFormat.N_TRIPLES, gzipped=False, activity=Activity("t"))


def test_kg_import_rdf_says_a_bomb_is_a_bomb(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    out = kg_cli("import", "rdf", str(_bomb(tmp_path / "bomb.nt.gz", 80)), store=built_store_path)
    assert out.returncode == 1 and "decompression bomb" in out.stderr and "Traceback" not in out.stderr


def test_the_loader_reads_a_plain_n_triples_file_by_its_path_unless_a_limit_of_kg_s_own_applies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read through Python, the loader waits for the GIL beside FileFacts; pyoxigraph's own
    limit on one token is the default limit on a literal, so a plain N-Triples file goes by
    its path, and a compressed file, another syntax or a lower KG_MAX_LITERAL_MIB through
    the guarded stream."""
    from kg.inputlimits import LiteralGuard
    from kg.store.bulk import load_source

    plain = _write(tmp_path / "plain.nt", range(3), blank=False)
    with load_source(plain, False, ox.RdfFormat.N_TRIPLES) as source:
        assert source == {"path": str(plain)}
    with load_source(plain, False, ox.RdfFormat.TURTLE) as source:
        assert isinstance(source["input"], LiteralGuard)
    zipped = _big_literal(tmp_path / "small.nt.gz", 0.01)
    with load_source(zipped, True, ox.RdfFormat.N_TRIPLES) as source:
        assert set(source) == {"input"}
    monkeypatch.setenv("KG_MAX_LITERAL_MIB", "1")
    with load_source(plain, False, ox.RdfFormat.N_TRIPLES) as source:
        assert isinstance(source["input"], LiteralGuard)
