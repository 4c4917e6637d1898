"""The remote store against a real Oxigraph server, side by side with the embedded one:
the store spec, queries over the union, atomic writes and bulk loads, and the errors."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.errors import QueryError, RDFImportError, RemoteStoreError, StoreError
from kg.graphs import PROVENANCE, graph_iri
from kg.store import open_store
from kg.store.base import Activity
from kg.store.endpoint import parse_spec
from kg.store.remote import RemoteStore
from tests.servers import LoopbackServer, QuietHandler, free_port
from tests.storecases import EX, G, load_broken_dump, triples


def values(store, graph: ox.NamedNode = G) -> list[str]:
    return sorted(t.object.value for t in store.triples(graph))


# -- the spec ------------------------------------------------------------------------


def test_the_spec_names_query_update_and_graph_store_urls() -> None:
    spec = parse_spec("http://h:7878/query;update=/update;gsp=http://h:7878/store;union=true;timeout=5")
    assert (spec.query, spec.update, spec.gsp, spec.union, spec.timeout) == (
        "http://h:7878/query", "http://h:7878/update", "http://h:7878/store", True, 5.0)
    implied = parse_spec("http://h:3030/ds/query")
    assert implied.update == "http://h:3030/ds/update" and implied.gsp is None and implied.union is None
    assert parse_spec("http://h:7879/sparql").update == "http://h:7879/sparql"


@pytest.mark.parametrize("spec, words", [
    ("http://h/query;graph=/x", "unknown store option"),
    ("http://h/query;union=maybe", "true or false"),
    ("http://h/query;timeout=soon", "number of seconds"),
    ("http://h/query;update=ftp://h/u", r"not an http\(s\) URL"),
])
def test_a_bad_spec_says_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(StoreError, match=words) as err:
        parse_spec(spec)
    assert err.value.hint


def test_passwords_and_tokens_never_reach_the_location(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_STORE_TOKEN", "s3cret-token")
    store = open_store("http://alice:hunter2@127.0.0.1:9/query")
    try:
        assert isinstance(store, RemoteStore)
        assert store.location == "http://alice:***@127.0.0.1:9/query"
        assert "s3cret" not in store.location and store._client.headers["Authorization"] == "Bearer s3cret-token"
        with pytest.raises(RemoteStoreError) as err:
            store.count()
        assert "hunter2" not in str(err.value) and "s3cret" not in str(err.value) + err.value.hint
    finally:
        store.close()


# -- behaviour shared with the embedded store -----------------------------------------


def test_replace_graph_swaps_content_and_records_provenance(store) -> None:
    with store.transaction(Activity("first")) as tx:
        assert tx.replace_graph(G, triples(3, "a"))
    with store.transaction("second") as tx:
        tx.replace_graph(G, triples(2, "b"))
    assert values(store) == ["b0", "b1"]
    info = {i.graph.value: i for i in store.graph_info()}[G.value]
    assert info.activity == "second" and info.triples == 2 and info.hash
    assert G in store.named_graphs() and PROVENANCE in store.named_graphs()


def test_an_exception_while_producing_triples_leaves_the_old_graph(store) -> None:
    with store.transaction("seed") as tx:
        tx.replace_graph(G, triples(5, "old"))

    def failing() -> Iterator[ox.Triple]:
        yield from triples(3, "new")
        raise RuntimeError("injected failure half-way")

    with pytest.raises(RuntimeError, match="injected"):
        with store.transaction("broken") as tx:
            tx.replace_graph(G, failing())
    assert values(store) == [f"old{i}" for i in range(5)]


def test_a_failing_operation_rolls_back_the_whole_transaction(store) -> None:
    other = graph_iri("other")
    with store.transaction("seed") as tx:
        tx.replace_graph(G, triples(2, "old"))
    before = store.count()
    with pytest.raises(StoreError):
        with store.transaction("broken") as tx:
            tx.replace_graph(G, triples(4, "new"))
            tx.insert(other, triples(1, "x"))
            tx.update(f"CREATE GRAPH {G}", touches=[G])  # fails: the graph exists
    assert values(store) == ["old0", "old1"]
    assert store.count(other) == 0 and store.count() == before


def test_queries_see_the_union_of_named_graphs_with_bindings(store) -> None:
    with store.transaction("two graphs") as tx:
        tx.replace_graph(graph_iri("a"), triples(2, "a"))
        tx.replace_graph(graph_iri("b"), [ox.Triple(ox.NamedNode(EX + "s0"), ox.NamedNode(EX + "q"), ox.Literal("x"))])
    rows = store.select(f"SELECT ?s ?v ?w WHERE {{ ?s <{EX}p> ?v ; <{EX}q> ?w }}", {"s": ox.NamedNode(EX + "s0")})
    assert [(r["v"].value, r["w"].value) for r in rows] == [("a0", "x")]
    assert store.ask("ASK { ?t a tkg:Technique ; skos:notation ?id }", {"id": ox.Literal("kda")}) is True
    limited = store.query("SELECT ?t WHERE { ?t a tkg:Technique }", max_rows=5)
    assert len(limited) == 5 and limited.truncated  # type: ignore[union-attr]


def test_a_malformed_query_is_a_query_error(store) -> None:
    with pytest.raises(QueryError, match="malformed|rejected the query"):
        store.select("SELECT WHERE {")


@pytest.mark.parametrize("gzipped", [False, True])
def test_bulk_load_replaces_a_graph_and_records_the_file(store, tmp_path: Path, gzipped: bool) -> None:
    with store.transaction("seed") as tx:
        tx.replace_graph(G, triples(3, "old"))
    body = "".join(f'<{EX}s{i}> <{EX}p> "{i}" .\n' for i in range(250))
    path = tmp_path / ("data.nt.gz" if gzipped else "data.nt")
    if gzipped:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(body)
    else:
        path.write_text(body, encoding="utf-8")
    count = store.load_file(path, graph=G, fmt=ox.RdfFormat.N_TRIPLES, gzipped=gzipped, activity=Activity("load"))
    assert count == 250 == store.count(G)
    info = {i.graph.value: i for i in store.graph_info()}[G.value]
    assert info.activity == "load" and (info.hash or "").startswith("file:")
    assert not [g for g in store.named_graphs() if "staging" in g.value]


@pytest.mark.parametrize("empty_target", [True, False])
def test_a_broken_dump_leaves_the_graph_as_it_was(store, tmp_path: Path, empty_target: bool) -> None:
    load_broken_dump(store, tmp_path, good_lines=12_000, seeded=not empty_target)
    assert values(store) == ([] if empty_target else ["keep0", "keep1", "keep2"])
    assert not [g for g in store.named_graphs() if "staging" in g.value or (empty_target and g == G)]


def test_dump_writes_one_graph_or_every_graph_as_quads(store) -> None:
    out = io.BytesIO()
    store.dump(out, fmt=ox.RdfFormat.N_QUADS)
    quads = list(ox.parse(out.getvalue(), format=ox.RdfFormat.N_QUADS))
    assert len(quads) == store.count()
    one = io.BytesIO()
    store.dump(one, fmt=ox.RdfFormat.TURTLE, graph=graph_iri("catalog"))
    assert len(list(ox.parse(one.getvalue(), format=ox.RdfFormat.TURTLE))) == store.count(graph_iri("catalog"))


def test_select_to_file_writes_standard_results(store, tmp_path: Path) -> None:
    import csv

    out = tmp_path / "techniques.csv"
    store.select_to_file("SELECT ?id WHERE { ?t a tkg:Technique ; skos:notation ?id ; tkg:onComparisonPage true }", out)
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0] == ["id"] and len(rows) == 40 and ["kda"] in rows


# -- remote only -----------------------------------------------------------------------


def test_chunked_uploads_keep_blank_nodes_whole_and_stay_atomic(oxigraph, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import kg.store.remote as remote

    monkeypatch.setattr(remote, "_CHUNK", 7)  # many INSERT DATA requests for a small file
    store = RemoteStore.from_spec(f"{oxigraph.base}/query")  # no gsp= : chunked updates
    try:
        path = tmp_path / "b.ttl"
        path.write_text(f"@prefix e: <{EX}> .\n" + "".join(
            f'e:s{i} e:p [ e:q "{i}" ] .\n' for i in range(20)) + 'e:s0 e:r _:shared .\ne:s19 e:r _:shared .\n',
            encoding="utf-8")
        assert store.load_file(path, graph=G, fmt=ox.RdfFormat.TURTLE, gzipped=False, activity=Activity("l")) == 42
        joined = store.select(f"SELECT ?o WHERE {{ <{EX}s0> <{EX}r> ?o . <{EX}s19> <{EX}r> ?o }}")
        assert len(joined) == 1
        deep = store.select(f"SELECT ?v WHERE {{ <{EX}s5> <{EX}p>/<{EX}q> ?v }}")
        assert [r["v"].value for r in deep] == ["5"]
        bad = tmp_path / "bad.ttl"
        bad.write_text("".join(f'<{EX}x{i}> <{EX}p> "{i}" .\n' for i in range(30)) + "<oops", encoding="utf-8")
        with pytest.raises(RDFImportError):
            store.load_file(bad, graph=G, fmt=ox.RdfFormat.TURTLE, gzipped=False, activity=Activity("l"))
        assert store.count(G) == 42
        raw = RemoteStore.from_spec(f"{oxigraph.base}/query;union=true")  # sees every graph, staging too
        try:
            assert raw.select("SELECT ?g WHERE { GRAPH ?g { } FILTER(CONTAINS(STR(?g), 'staging')) }").rows == []
        finally:
            raw.close()
    finally:
        store.close()


def test_a_union_default_graph_server_is_detected(start_oxigraph, built_nquads: bytes) -> None:
    with start_oxigraph("--union-default-graph") as server:
        server.load(built_nquads)
        with RemoteStore.from_spec(server.spec) as store:
            assert store.count() > 4000
            assert store._dataset() == {}  # nothing to pass: the default graph is the union
    with start_oxigraph() as server:
        server.load(built_nquads)
        with RemoteStore.from_spec(server.spec) as store:
            names = store._dataset()["default-graph-uri"]
            assert graph_iri("catalog").value in names


def test_an_oxigraph_server_lists_its_graphs_by_name_without_reading_their_triples(
        start_oxigraph, built_nquads: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    with start_oxigraph() as server:
        server.load(built_nquads)
        with RemoteStore.from_spec(server.spec) as store:
            store.update(f"CLEAR GRAPH {graph_iri('catalog')}")  # Oxigraph keeps the emptied graph's name
            asked: list[str] = []
            raw = store._raw_select
            monkeypatch.setattr(store, "_raw_select", lambda text: asked.append(text) or raw(text))
            listed = store.named_graphs()
            assert graph_iri("reading-list") in listed and PROVENANCE in listed
            assert graph_iri("catalog") not in listed
            assert store.capabilities.graphs_by_name is True
            assert not [text for text in asked if "GROUP BY ?g" in text]  # no scan of every quad


class _Answer(QuietHandler):
    """A real HTTP server that answers every request with one status and body."""

    status = 500
    body = b"boom"
    media = "text/plain"

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.reply(self.status, self.body, self.media)

    do_GET = do_POST = do_PUT = _reply


@pytest.fixture
def answering() -> Iterator[object]:
    def start(status: int, body: bytes = b"boom", media: str = "text/plain"):
        server = LoopbackServer(type("Handler", (_Answer,), {"status": status, "body": body, "media": media}))
        servers.append(server)
        return server.base

    servers: list[LoopbackServer] = []
    yield start
    for server in servers:
        server.close()


def test_an_unreachable_endpoint_names_the_url_and_the_fix() -> None:
    port = free_port()  # a port nobody listens on
    with RemoteStore.from_spec(f"http://127.0.0.1:{port}/query") as store:
        with pytest.raises(RemoteStoreError) as err:
            store.count()
    assert f"127.0.0.1:{port}/query" in str(err.value) and "cannot reach" in str(err.value)
    assert "running" in err.value.hint and "/query" in err.value.hint


@pytest.mark.parametrize("status, words, hint", [
    (404, "no SPARQL endpoint", "query URL itself"),
    (401, "refused", "KG_STORE_TOKEN"),
    (403, "refused", "KG_STORE_TOKEN"),
    (500, "failed on the query (500): boom", "server's log"),
    (503, "refused the query (503)", "--timeout"),
    (422, "refused the query (422)", "--max-rows"),
])
def test_http_errors_become_remote_store_errors_with_hints(answering, status: int, words: str, hint: str) -> None:
    with RemoteStore.from_spec(answering(status) + "/query;union=true") as store:
        with pytest.raises(RemoteStoreError) as err:
            store.select("SELECT * WHERE { ?s ?p ?o }")
    assert words in str(err.value) and hint in err.value.hint and err.value.status == status


def test_a_rejected_update_says_nothing_was_written(answering) -> None:
    with RemoteStore.from_spec(answering(500, b"disk full") + "/query") as store:
        with pytest.raises(RemoteStoreError, match="nothing was written") as err:
            store.update("INSERT DATA { <http://x/a> <http://x/b> 1 }")
    assert "disk full" in str(err.value) and "unchanged" in err.value.hint


def test_an_answer_that_is_not_sparql_results_is_reported(answering) -> None:
    with RemoteStore.from_spec(answering(200, b"<html>hello</html>", "text/html") + "/;union=true") as store:
        with pytest.raises(RemoteStoreError, match="not SPARQL results") as err:
            store.count()
    assert "query URL itself" in err.value.hint


def test_a_server_that_accepts_move_but_moves_nothing_is_named_not_retried(oxigraph, tmp_path: Path) -> None:
    """A real Oxigraph server behind a proxy that drops the MOVE of every update it passes on
    (and answers success), as a server that does not carry MOVE out would."""
    import re
    from urllib.parse import quote_plus, unquote_plus

    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from tests.servers import serving

    async def forward(request: Request) -> Response:
        body = await request.body()
        path = request.url.path
        if path == "/update":
            if "sparql-update" in request.headers.get("content-type", ""):
                body = re.sub(rb"(?i)MOVE\s+SILENT\s+<[^>]+>\s+TO\s+<[^>]+>", b"CLEAR SILENT GRAPH <urn:x:none>", body)
            else:
                text = unquote_plus(dict(x.split("=", 1) for x in body.decode().split("&"))["update"])
                text = re.sub(r"(?i)MOVE\s+SILENT\s+<[^>]+>\s+TO\s+<[^>]+>", "CLEAR SILENT GRAPH <urn:x:none>", text)
                body = ("update=" + quote_plus(text)).encode()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        async with httpx.AsyncClient() as client:
            answer = await client.request(request.method, oxigraph.base + path, params=request.query_params,
                                          content=body, headers=headers, timeout=60)
        return Response(answer.content, answer.status_code, media_type=answer.headers.get("content-type"))

    app = Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST", "PUT", "DELETE"])])
    dump = tmp_path / "x.nt"
    dump.write_text("".join(f'<{EX}s{i}> <{EX}p> "{i}" .\n' for i in range(5)), encoding="utf-8")
    with serving(app) as base, RemoteStore.from_spec(f"{base}/query;update=/update") as store:
        with pytest.raises(RemoteStoreError) as failed:
            store.load_file(dump, graph=G, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                            activity=Activity("kg import rdf", used=[str(dump)]))
    message, hint = failed.value.message, failed.value.hint or ""
    assert "accepted MOVE SILENT" in message and "moved nothing" in message and "holds 0 of the 5" in message
    assert "fails the same way" in hint and "run the command again" not in hint


def test_validation_on_a_server_finds_what_the_embedded_store_finds_and_reuses_its_answer(
    store, built_store_dir: Path, tmp_path: Path
) -> None:
    """A server is asked the constraints in a few requests (kg.validate batches them) and
    keeps a cache per endpoint, as the embedded store keeps one in its folder."""
    import shutil

    from kg.store.embedded import OxigraphStore
    from kg.validate import cache_for, validate
    from tests.test_validate import BREAKS

    copy = tmp_path / "embedded"
    shutil.copytree(built_store_dir, copy)
    with OxigraphStore(copy) as embedded:
        embedded.update(BREAKS)
        expected = {(v.focus, v.path, v.message) for v in validate(embedded).violations}
    store.update(BREAKS)
    cache = cache_for(store)
    assert cache is not None
    first = validate(store, cache=cache)
    assert {(v.focus, v.path, v.message) for v in first.violations} == expected and len(expected) >= 18
    again = validate(store, cache=cache)
    assert again.evaluated == 0 and again.violations == first.violations  # nothing changed: the answer stands
    # A write that leaves no record (another client of the server) is still seen as a change.
    store.update('DELETE DATA { GRAPH <https://w3id.org/techkg/graph/catalog> { '
                 '<https://w3id.org/techkg/id/technique/mla> skos:prefLabel "Nom"@fr } }')
    if store.batches_queries:
        third = validate(store, cache=cache)
        assert third.evaluated > 0 and len(third.violations) < len(first.violations)


# -- the token stays with the endpoint's origin ------------------------------------------


class _Recording(QuietHandler):
    """Records each request's headers; ``redirect`` (if set) answers 307 there, else an
    empty SPARQL result."""

    redirect: str | None = None
    seen: list[dict[str, str]]

    def _reply(self) -> None:
        self.seen.append({k.lower(): v for k, v in self.headers.items()})
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.redirect:
            self.send_response(307)  # 307 keeps the POST and its body
            self.send_header("Location", self.redirect + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.reply(200, b'{"head": {"vars": ["s"]}, "results": {"bindings": []}}', "application/sparql-results+json")

    do_GET = do_POST = _reply


def test_the_store_token_never_follows_a_redirect_to_another_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "store-token-that-stays-home"
    monkeypatch.setenv("KG_STORE_TOKEN", token)
    seen: dict[str, list[dict[str, str]]] = {"first": [], "second": []}
    with LoopbackServer(type("Second", (_Recording,), {"seen": seen["second"]})) as second, \
            LoopbackServer(type("First", (_Recording,), {"seen": seen["first"], "redirect": second.base})) as first, \
            RemoteStore.from_spec(f"{first.base}/query;union=true") as store:
        assert len(store.select("SELECT ?s WHERE { ?s ?p ?o }")) == 0
    assert seen["first"] and all(h.get("authorization") == f"Bearer {token}" for h in seen["first"])
    assert seen["second"], "the redirect was followed"
    assert not any(token in value for headers in seen["second"] for value in headers.values()), seen["second"]


def test_the_store_client_strips_credentials_on_an_http_to_https_redirect() -> None:
    """httpx keeps Authorization from http://host to https://host; the one rule does not
    (another scheme is another origin), and keeps it within the origin."""
    import httpx

    with RemoteStore(parse_spec("http://endpoint.example/query"), token="tok") as store:
        client = store._client
        request = client.build_request("POST", "http://endpoint.example/query")
        moved = client._redirect_headers(request, httpx.URL("https://endpoint.example/query"), "POST")
        assert "authorization" not in {k.lower() for k in moved}
        same = client._redirect_headers(request, httpx.URL("http://endpoint.example/sparql"), "POST")
        assert same["authorization"] == "Bearer tok"
