"""What makes the remote store portable, on real servers: Virtuoso 7 with the limits it
ships with, Oxigraph, and a recording proxy in front of Oxigraph that plays a server
which accepts uploads and drops them. Staged atomic writes, row caps, system graphs,
stale staging graphs, killed imports, permission refusals, and what the client sends."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from kg.errors import RemoteStoreError, StoreError
from kg.graphs import graph_iri
from kg.store import staging
from kg.store.base import Activity
from kg.store.remote import RemoteStore
from tests.servers import KG, LoopbackServer, QuietHandler, VirtuosoServer

EX = "http://example.org/"
G = graph_iri("import/portable")


def triples(n: int, tag: str = "v") -> list[ox.Triple]:
    return [ox.Triple(ox.NamedNode(f"{EX}s{i}"), ox.NamedNode(EX + "p"), ox.Literal(f"{tag}{i}")) for i in range(n)]


@pytest.fixture
def virtuoso_store(virtuoso: VirtuosoServer) -> Iterator[RemoteStore]:
    virtuoso.clear()
    with RemoteStore.from_spec(f"{virtuoso.base}/sparql") as store:
        yield store


def staging_graphs(store: RemoteStore) -> list[ox.NamedNode]:
    return [g for g in store._all_graphs() if g.value.startswith(staging.STAGING)]


def test_a_transaction_too_large_for_virtuoso_is_staged_and_stays_atomic(virtuoso_store: RemoteStore) -> None:
    store = virtuoso_store
    with store.transaction("seed") as tx:
        tx.replace_graph(G, triples(5, "old"))
    with pytest.raises(StoreError):  # the last operation fails after 3,000 triples were staged
        with store.transaction("too big, then broken") as tx:
            tx.replace_graph(G, triples(3000, "new"))
            tx.update("THIS IS NOT AN UPDATE", touches=[G])
    assert store.capabilities.update_triples == 400
    assert sorted(t.object.value for t in store.triples(G)) == [f"old{i}" for i in range(5)]
    assert staging_graphs(store) == []
    with store.transaction("too big") as tx:
        tx.replace_graph(G, [*triples(3000, "new"), ox.Triple(ox.BlankNode(), ox.NamedNode(EX + "q"), ox.Literal("b"))])
    assert store.count(G) == 3001 and staging_graphs(store) == []
    info = {i.graph: i for i in store.graph_info()}[G]
    assert info.activity == "too big" and info.triples == 3001


def test_a_store_lists_the_servers_graphs_once_until_it_writes_one(virtuoso_store: RemoteStore,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    store, listed = virtuoso_store, []
    graph = graph_iri(f"import/listed-{time.time_ns()}")
    scan = store._all_graphs
    monkeypatch.setattr(store, "_all_graphs", lambda: listed.append(1) or scan())
    for _ in range(3):
        assert graph not in store.named_graphs()
        store.query("ASK { ?s ?p ?o }")
    assert len(listed) == 1  # each list is a scan of every quad on the server
    assert store.capabilities.graphs_by_name is False  # Virtuoso 7 lists no graph by name
    with store.transaction("new graph") as tx:
        tx.replace_graph(graph, triples(3))
    assert graph in store.named_graphs() and store.query(f"ASK {{ GRAPH {graph} {{ ?s ?p ?o }} }}") is True
    assert len(listed) == 2


def test_an_import_into_virtuoso_goes_through_its_graph_store_endpoint_unasked(virtuoso_store: RemoteStore,
                                                                               tmp_path: Path) -> None:
    store, sent = virtuoso_store, []
    path = tmp_path / "dump.nt"
    lines = [f"{t.subject} {t.predicate} {t.object} ." for t in triples(3000)] + [f"_:b <{EX}q> <{EX}s1> ."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    update = store.update
    store.update = lambda text: sent.append(text) or update(text)  # type: ignore[method-assign]
    count = store.load_file(path, graph=G, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False, activity=Activity("load"))
    assert count == 3001 == store.count(G)
    assert store.capabilities.graph_store == "/sparql-graph-crud"
    assert not [text for text in sent if text.startswith("INSERT DATA")]  # not 400 triples a request in SQL
    assert staging_graphs(store) == []


def test_answers_past_virtuosos_row_cap_are_paged_never_cut(virtuoso_store: RemoteStore, tmp_path: Path) -> None:
    store = virtuoso_store
    with store.transaction("many") as tx:
        tx.replace_graph(G, triples(12_345))
    rows = store.select(f"SELECT ?s ?o WHERE {{ ?s <{EX}p> ?o }}")
    assert len(rows) == 12_345 and len({r["s"] for r in rows}) == 12_345
    assert store.capabilities.row_cap == 10_000
    ordered = store.select(f"SELECT ?o WHERE {{ ?s <{EX}p> ?o }} ORDER BY DESC(?o) LIMIT 11000 OFFSET 5")
    expected = sorted((f"v{i}" for i in range(12_345)), reverse=True)[5:11_005]
    assert [r["o"].value for r in ordered] == expected  # type: ignore[union-attr]
    assert len(store.triples(G)) == 12_345
    limited = store.query(f"SELECT ?s WHERE {{ ?s <{EX}p> ?o }}", max_rows=10)
    assert len(limited) == 10 and limited.truncated  # type: ignore[union-attr]
    out = tmp_path / "all.tsv"
    store.select_to_file(f"SELECT ?s WHERE {{ ?s <{EX}p> ?o }}", out, fmt="tsv")
    assert len(out.read_text(encoding="utf-8").splitlines()) == 12_346


def test_virtuosos_system_graphs_stay_out_of_the_union(virtuoso: VirtuosoServer, virtuoso_store: RemoteStore) -> None:
    store = virtuoso_store
    with store.transaction("one") as tx:
        tx.replace_graph(G, triples(3))
    assert store.named_graphs() == sorted([G, graph_iri("provenance")], key=lambda g: g.value)
    assert any("openlinksw" in g.value for g in store._all_graphs())  # they are there
    assert {i.graph for i in store.graph_info()} == set(store.named_graphs())
    assert store.count() == store.count(G) + store.count(graph_iri("provenance"))
    with RemoteStore.from_spec(f"{virtuoso.base}/sparql;union=false") as explicit:
        assert explicit.named_graphs() == store.named_graphs() and explicit.count() == store.count()


def test_a_permission_refusal_names_the_grant_to_give(virtuoso: VirtuosoServer, virtuoso_store: RemoteStore) -> None:
    virtuoso.isql('REVOKE SPARQL_UPDATE FROM "SPARQL";')
    try:
        with pytest.raises(RemoteStoreError, match="permission") as err:
            with virtuoso_store.transaction("refused") as tx:
                tx.replace_graph(G, triples(2))
        assert 'GRANT SPARQL_UPDATE TO "SPARQL"' in err.value.hint and "isql-vt" in err.value.hint
    finally:
        virtuoso.isql('GRANT SPARQL_UPDATE TO "SPARQL";')
    assert virtuoso_store.count(G) == 0


def test_a_stale_staging_graph_is_dropped_on_the_next_start_and_said(
        oxigraph, caplog: pytest.LogCaptureFixture) -> None:
    with RemoteStore.from_spec(oxigraph.spec) as store:
        with store.transaction("seed") as tx:
            tx.replace_graph(G, triples(2))
        stale, live = staging.new_staging_graph(), staging.new_staging_graph()
        store.update(staging.lease_update(stale, -1))
        store.update(f'INSERT DATA {{ GRAPH {stale} {{ <{EX}x> <{EX}p> "half" }} }}')
        store.update(staging.lease_update(live, 600))
    with caplog.at_level(logging.WARNING, logger="kg.store"), RemoteStore.from_spec(oxigraph.spec) as store:
        assert store.count(G) == 2
        left = staging_graphs(store)
    assert left == [live]
    assert any(stale.value in r.getMessage() and "interrupted" in r.getMessage() for r in caplog.records)


def test_a_killed_import_leaves_the_graph_as_it_was_and_the_next_command_cleans_up(
        oxigraph, tmp_path: Path) -> None:
    big = tmp_path / "big.nt"
    big.write_text("".join(f'<{EX}s{i}> <{EX}p> "{i}" .\n' for i in range(400_000)), encoding="utf-8")
    spec = f"{oxigraph.base}/query;timeout=5"  # no gsp=: chunked updates, a lease of 20 s
    env = {**os.environ, "KG_STORE": spec}
    proc = subprocess.Popen([str(KG), "import", "rdf", str(big), "--graph", "new"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with RemoteStore.from_spec(spec) as watch:
            deadline = time.monotonic() + 120
            while not any(watch._graph_count(g) > 1 for g in staging_graphs(watch)):
                assert proc.poll() is None and time.monotonic() < deadline, "the import did not start uploading"
                time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    new = graph_iri("new")
    with RemoteStore.from_spec(spec) as store:
        assert store.count(new) == 0 and new not in store.named_graphs()
        assert store.graph_hash(new) is None  # no provenance either
    time.sleep(21)  # the killed process's lease runs out
    later = subprocess.run([str(KG), "stats"], env={**env, "COLUMNS": "120"}, capture_output=True, text=True,
                           timeout=120, check=True)
    assert "dropped" in later.stderr and "interrupted" in later.stderr
    with RemoteStore.from_spec(spec) as store:
        assert staging_graphs(store) == []


class _Recorder(QuietHandler):
    """Forwards to an Oxigraph server, but answers Graph Store uploads 204 and keeps
    nothing (as Virtuoso did with chunked bodies); records what the client sent."""

    upstream = ""
    seen: list[dict[str, str]] = []

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append({"method": self.command, "path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
        if self.path.startswith("/store") and self.command in ("PUT", "POST"):
            self.send_response(204)
            self.end_headers()
            return
        response = httpx.request(self.command, self.upstream + self.path, content=body, timeout=60,
                                 headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
        self.send_response(response.status_code)
        for key in ("content-type",):
            if key in response.headers:
                self.send_header(key, response.headers[key])
        self.send_header("Content-Length", str(len(response.content)))
        self.end_headers()
        self.wfile.write(response.content)

    do_GET = do_POST = do_PUT = _forward


@pytest.fixture
def recorder(oxigraph) -> Iterator[tuple[str, list[dict[str, str]]]]:
    seen: list[dict[str, str]] = []
    handler = type("Handler", (_Recorder,), {"upstream": oxigraph.base, "seen": seen})
    with LoopbackServer(handler) as server:
        yield server.base, seen


def test_an_upload_the_server_accepts_and_drops_is_an_error_and_leaves_nothing(recorder, tmp_path: Path) -> None:
    base, seen = recorder
    path = tmp_path / "small.nt"
    path.write_text("".join(f'<{EX}s{i}> <{EX}p> "{i}" .\n' for i in range(50)), encoding="utf-8")
    with RemoteStore.from_spec(f"{base}/query;update=/update;gsp=/store") as store:
        with pytest.raises(RemoteStoreError, match="accepted 50 triples and holds 0") as err:
            store.load_file(path, graph=G, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False, activity=Activity("l"))
        assert "Nothing was changed" in err.value.hint
        assert store.count(G) == 0 and staging_graphs(store) == []
    upload = next(r for r in seen if r["path"].startswith("/store"))
    assert upload["content-length"] == str(path.stat().st_size) and "transfer-encoding" not in upload


def test_each_query_form_asks_for_what_it_can_answer(recorder) -> None:
    base, seen = recorder
    with RemoteStore.from_spec(f"{base}/query;union=true") as store:
        store._start()
        seen.clear()
        store.select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
        store.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 1")
        store.ask("ASK { ?s ?p ?o }")
    accepts = [r["accept"] for r in seen if r["path"].startswith("/query")]
    assert accepts[0].startswith("application/sparql-results+json") and "n-triples" not in accepts[0]
    assert accepts[1].startswith("application/n-triples") and "sparql-results" not in accepts[1]
    assert "sparql-results" in accepts[2] and "turtle" not in accepts[2]
