"""`kg serve` and `kg sparql` against queries built to hurt: parser stack overflows,
runaway joins, memory hogs, floods, SERVICE and LOAD aimed at the machine's own ports.
The server never dies, stops what runs too long or grows too large, answers cheap
queries meanwhile, and sends no request anywhere."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from tests.conftest import at_once
from tests.servers import KG, LoopbackServer, QuietHandler, kg_serve

EX = "http://example.org/"
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
#: Sorting 22 million rows: grows by hundreds of MB a second.
MEMORY_HOG = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f"
CHEAP = "SELECT ?id WHERE { ?t a tkg:Technique ; skos:notation ?id } ORDER BY ?id LIMIT 5"
DEEP_BRACES = "SELECT * WHERE " + "{" * 3000 + "}" * 3000


@pytest.fixture(scope="module")
def served(built_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, object]]:
    """One `kg serve` process (a real one: a crash cannot take the tests with it)."""
    import shutil

    store = tmp_path_factory.mktemp("hostile-serve") / "store"
    shutil.copytree(built_store_dir, store)
    with kg_serve(store, "--timeout", "3", "--workers", "2", "--query-memory", "300",
                  ready="/sparql?query=ASK%7B%7D", timeout=60) as (proc, info):
        yield str(info["sparql"]), proc


def ask(url: str, query: str, **kwargs: object) -> httpx.Response:
    return httpx.post(url, data={"query": query}, headers={"Accept": "application/json"},
                      timeout=60, **kwargs)  # type: ignore[arg-type]


def alive(url: str, proc: object) -> bool:
    assert isinstance(proc, subprocess.Popen)
    return proc.poll() is None and httpx.get(url, params={"query": "ASK {}"}, timeout=30).status_code == 200


def _workers(proc: object) -> list[psutil.Process]:
    """The query workers of a `kg serve`: the children of its fork server."""
    children = psutil.Process(proc.pid).children(recursive=True)  # type: ignore[attr-defined]
    return [c for c in children if c.ppid() != proc.pid]  # type: ignore[attr-defined]


def _cpu(workers: list[psutil.Process], interval: float = 0.5) -> dict[psutil.Process, float]:
    """Each worker's CPU use over ``interval`` seconds (0 for one that has gone)."""
    for worker in workers:
        with contextlib.suppress(psutil.Error):
            worker.cpu_percent(None)
    time.sleep(interval)
    use = {}
    for worker in workers:
        try:
            use[worker] = worker.cpu_percent(None)
        except psutil.Error:
            use[worker] = 0.0
    return use


def _busiest_worker(proc: object, within: float = 20) -> psutil.Process:
    """The worker running a query, once one is (rather than after a fixed wait)."""
    deadline = time.monotonic() + within
    while True:
        use = _cpu(_workers(proc))
        busiest = max(use, key=use.__getitem__)
        if use[busiest] > 5 or time.monotonic() > deadline:  # idle workers use none
            return busiest


def _all_idle(proc: object, within: float = 20) -> bool:
    """Whether every worker is soon idle (no stopped query still burning a CPU)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if max(_cpu(_workers(proc)).values(), default=0.0) < 50:
            return True
    return False


def test_a_6_kb_query_of_nested_braces_gets_400_and_the_server_lives(served: tuple[str, object]) -> None:
    url, proc = served
    r = ask(url, DEEP_BRACES)
    assert r.status_code == 400 and "3000 levels" in r.json()["error"] and "64" in r.json()["error"]
    # The same as a cross-origin HTML form would send it, and as a 17 KB GET.
    form = httpx.post(url, content=b"query=" + DEEP_BRACES.encode(),
                      headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"})
    assert form.status_code == 400
    get = httpx.get(url, params={"query": "SELECT * WHERE { FILTER(" + "(" * 8500 + "1" + ")" * 8500 + ") }"})
    assert get.status_code == 400 and "nests" in get.text
    assert alive(url, proc)


def test_a_query_over_the_size_limit_gets_413_saying_so(served: tuple[str, object]) -> None:
    url, proc = served
    r = ask(url, "SELECT * WHERE { " + "?s ?p ?o . " * 30_000 + "}")
    assert r.status_code == 413 and "limit of 262,144 bytes" in r.json()["error"]
    assert "--max-query-size" in r.json()["hint"]
    assert alive(url, proc)


def test_kg_sparql_refuses_a_deep_query_instead_of_crashing(built_store_path: Path, tmp_path: Path) -> None:
    query = tmp_path / "deep.rq"
    query.write_text(DEEP_BRACES)
    proc = subprocess.run([str(KG), "--store", str(built_store_path), "sparql", str(query)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "nests 3000 levels" in proc.stderr and "Traceback" not in proc.stderr


def test_runaway_queries_are_stopped_at_the_timeout_and_cheap_ones_answered_meanwhile(
        served: tuple[str, object]) -> None:
    url, proc = served
    results: list[tuple[int, float]] = []

    def runaway() -> None:
        started = time.monotonic()
        results.append((ask(url, RUNAWAY).status_code, time.monotonic() - started))

    threads = [threading.Thread(target=runaway) for _ in range(2)]  # as many as workers
    for t in threads:
        t.start()
    time.sleep(0.5)
    cheap = ask(url, CHEAP)  # queued behind them, not refused
    assert cheap.status_code == 200 and len(cheap.json()["results"]["bindings"]) == 5
    for t in threads:
        t.join()
    assert [code for code, _ in results] == [503, 503]
    assert all(2.5 < seconds < 8 for _, seconds in results), results
    assert _all_idle(proc), "a stopped query still burns a CPU"
    assert alive(url, proc)


def test_a_query_that_grows_past_its_memory_limit_is_stopped(serve, built_store) -> None:
    with serve(built_store, timeout=60, workers=1, query_memory=200 << 20) as base:
        started = time.monotonic()
        r = ask(f"{base}/sparql", MEMORY_HOG)
        assert r.status_code == 503 and r.json()["type"] == "QueryMemory", r.text
        assert "200 MiB" in r.json()["error"] and "--query-memory" in r.json()["hint"]
        assert time.monotonic() - started < 45  # stopped at the limit, not at the timeout
        assert psutil.Process().memory_info().rss < 1 << 30  # the server's process did not grow
        assert ask(f"{base}/sparql", CHEAP).status_code == 200


def test_a_killed_worker_is_replaced_and_the_client_told(served: tuple[str, object]) -> None:
    url, proc = served
    box: list[httpx.Response] = []
    thread = threading.Thread(target=lambda: box.append(ask(url, RUNAWAY)))
    thread.start()
    busy = _busiest_worker(proc)
    busy.send_signal(signal.SIGSEGV)
    thread.join()
    assert box[0].status_code == 500 and "SIGSEGV" in box[0].json()["error"]
    assert "carries on" in box[0].json()["error"]
    assert alive(url, proc)


def test_a_query_whose_client_went_away_is_stopped(serve, built_store) -> None:
    with serve(built_store, timeout=60, workers=1) as base:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{base}/sparql", data={"query": RUNAWAY}, timeout=httpx.Timeout(30, read=0.7))
        started = time.monotonic()
        # The one worker is free again long before the 60 s timeout would have freed it.
        assert ask(f"{base}/sparql", CHEAP).status_code == 200 and time.monotonic() - started < 15


def test_only_a_full_queue_gets_503(serve, built_store) -> None:
    with serve(built_store, workers=2, queue=64, timeout=10) as base:
        codes = at_once(lambda: httpx.get(f"{base}/sparql", params={"query": CHEAP}, timeout=60).status_code, 50)
        assert codes == [200] * 50
    with serve(built_store, workers=1, queue=1, timeout=3) as base:
        first = threading.Thread(target=lambda: httpx.get(f"{base}/sparql", params={"query": RUNAWAY}, timeout=30))
        first.start()
        time.sleep(1.0)  # the runaway holds the one worker for 3 s
        answers = at_once(lambda: httpx.get(f"{base}/sparql", params={"query": CHEAP}, timeout=30), 4)
        first.join()
        busy = [a for a in answers if a.status_code == 503]
        # One request waits in the queue of one and is answered; the others find it full.
        assert busy and all("busy" in a.text and a.headers["retry-after"] for a in busy)
        assert sorted(a.status_code for a in answers if a not in busy) == [200] * (4 - len(busy))
        assert len(busy) < 4


class Listener:
    """A TCP port on 127.0.0.1 that records whether anyone connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]

    def connected(self) -> bool:
        try:
            conn, _ = self.sock.accept()
        except TimeoutError:
            return False
        finally:
            self.sock.close()
        conn.close()
        return True


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_service_and_load_send_no_request_and_tell_no_port_from_another(serve, built_store) -> None:
    listener = Listener()
    closed = _closed_port()
    with serve(built_store, allow_update=True, token="t0ken") as base:
        answers = []
        for port in (listener.port, closed, 22):
            for query in (f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }}",
                          f"SELECT * WHERE {{ SERVICE SILENT <http://127.0.0.1:{port}/> {{ ?s ?p ?o }} }}",
                          f"PREFIX x: <http://127.0.0.1:{port}/> SELECT * WHERE {{ ?a ?b ?c . sErViCe x:q {{ }} }}",
                          # a prefixed name right before the keyword (the lexer took ``ex:.SERVICE`` for one name)
                          f"PREFIX ex: <{EX}> SELECT * WHERE {{ ?a ?b ex:.SERVICE <http://127.0.0.1:{port}/> {{ }} }}",
                          f"PREFIX ex: <{EX}> SELECT * WHERE {{ ?a ?b ex:o\\.x.#\n"
                          f"SERVICE<http://127.0.0.1:{port}/>{{}} }}"):
                r = httpx.post(f"{base}/sparql", data={"query": query}, headers={"Accept": "application/json"})
                answers.append((r.status_code, r.json()["error"]))
        assert {code for code, _ in answers} == {403}
        assert len({message for _, message in answers}) == 1 and "SERVICE is off" in answers[0][1]
        assert not any(str(p) in message for p in (listener.port, closed) for _, message in answers)
        for update in (f"LOAD <http://127.0.0.1:{listener.port}/x.ttl>",
                       f"PREFIX ex: <{EX}> INSERT DATA {{ ex:a ex:b ex: }} ;LOAD <http://127.0.0.1:{listener.port}/>",
                       f"PREFIX x: <http://127.0.0.1:{listener.port}/> lOaD#c\nSILENT x:y INTO GRAPH <urn:g>"):
            load = httpx.post(f"{base}/sparql", data={"update": update}, headers={"Authorization": "Bearer t0ken"})
            assert load.status_code == 403 and "LOAD is off" in load.text, update
        insert = httpx.post(f"{base}/sparql", headers={"Authorization": "Bearer t0ken"}, data={
            "update": "INSERT { GRAPH <https://w3id.org/techkg/graph/import/x> { ?s ?p ?o } } WHERE "
                      f"{{ SERVICE <http://127.0.0.1:{listener.port}/sparql> {{ ?s ?p ?o }} }}"})
        assert insert.status_code == 403 and "SERVICE is off" in insert.text
    assert not listener.connected()


def test_allowed_service_hosts_are_federated_and_others_refused(serve, built_store, start_oxigraph) -> None:
    with start_oxigraph() as other:
        other.load(b'<http://x/a> <http://x/p> "from elsewhere" <http://x/g> .\n')
        host = other.base.removeprefix("http://")
        with serve(built_store, allow_service=(host,)) as base:
            query = f"SELECT ?o WHERE {{ SERVICE <{other.base}/query> {{ GRAPH ?g {{ ?s ?p ?o }} }} }}"
            r = httpx.post(f"{base}/sparql", data={"query": query}, headers={"Accept": "application/json"})
            assert r.status_code == 200, r.text
            assert [b["o"]["value"] for b in r.json()["results"]["bindings"]] == ["from elsewhere"]
            elsewhere = httpx.post(f"{base}/sparql", data={"query": "SELECT * WHERE { SERVICE "
                                                           "<http://127.0.0.1:1/> { ?s ?p ?o } }"})
            assert elsewhere.status_code == 403 and host in elsewhere.text
            variable = httpx.post(f"{base}/sparql", data={"query": "SELECT * WHERE { SERVICE ?x { ?s ?p ?o } }"})
            assert variable.status_code == 403 and "constant" in variable.text


def test_an_allowed_service_that_fails_tells_no_open_port_from_a_closed_one(serve, built_store) -> None:
    listener = socket.socket()  # accepts, then closes without a word
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    open_port, closed = listener.getsockname()[1], _closed_port()
    hosts = (f"127.0.0.1:{open_port}", f"127.0.0.1:{closed}")

    def hang_up() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    try:
        with serve(built_store, allow_service=hosts, timeout=10) as base:
            answers = []
            for port in (open_port, closed):
                query = f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }}"
                r = httpx.post(f"{base}/sparql", data={"query": query}, headers={"Accept": "application/json"})
                answers.append((r.status_code, r.json()["error"], r.json().get("hint")))
    finally:
        listener.close()
    assert answers[0] == answers[1] and answers[0][0] == 502
    assert not any(word in str(answers) for word in ("refused", "reset", "Connection", str(open_port), str(closed)))



# -- a SERVICE fuzzer: prefixed names, comments, whitespace --------------------------------


class Recorder(LoopbackServer):
    """A SPARQL endpoint on 127.0.0.1 that answers every request with no rows and counts them."""

    def __init__(self) -> None:
        recorder = self
        self.hits = 0

        class Handler(QuietHandler):
            def _answer(self) -> None:
                recorder.hits += 1
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                self.reply(200, b'{"head":{"vars":["a","b","c"]},"results":{"bindings":[]}}',
                           "application/sparql-results+json")

            do_GET = do_POST = _answer

        super().__init__(Handler)


def _fuzzed(rng: random.Random, port: int) -> tuple[str, bool]:
    """A query (and whether it holds a real SERVICE call) that puts SERVICE right after
    prefixed names, dots, comments and odd whitespace, in any case, in nested groups; or a
    decoy that only names the word (in a string, a comment, a variable, a name, an IRI)."""
    def gap(allow_empty: bool = True) -> str:
        choices = [" ", "\t", "\n", "\r\n", "  \t ", " # SERVICE <http://127.0.0.1:1/> {}\n", "#x\n", "\n#}\n"]
        return rng.choice(([""] if allow_empty else []) + choices)

    def cased(word: str) -> str:
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in word)

    prologue = f"PREFIX ex: <http://example.org/>\nPREFIX svc: <http://127.0.0.1:{port}/>\n"
    target = rng.choice([f"<http://127.0.0.1:{port}/sparql>", "svc:sparql", "svc:", "svc:a\\-b", "<sparql>"])
    if target == "<sparql>":
        prologue = f"BASE <http://127.0.0.1:{port}/>\n" + prologue
    before = rng.choice(["?s ?p ex:", "?s ?p ex:o", "?s ?p <http://example.org/o>", "?s ?p ex:o\\.x",
                         "?s ?p ex:o.x", "?s ex:p ex:o ; ex:p ex:", "BIND(1 AS ?one)", "VALUES ?v { ex:o }",
                         "?s ?p \"lit\"", "?s ?p ex:o , ex:"])
    dot = rng.choice([".", " .", ".", "\n."]) if not before.startswith(("BIND", "VALUES")) else rng.choice(["", " "])
    silent = rng.choice(["", cased("silent") + gap(False)])
    body = "{" + gap() + "?a ?b ?c" + gap() + "}"
    if rng.random() < 0.2:  # a decoy: the word where it calls nothing
        decoy = rng.choice([f'FILTER(?p != "SERVICE <http://127.0.0.1:{port}/> {{}}")',
                            "BIND(?s AS ?service)", "?s ex:service ?service",
                            f"?s ?p ?o FILTER(?o != <http://127.0.0.1:{port}/service>)",
                            "?s ?p ?o # SERVICE <http://127.0.0.1:1/> { }\n"])
        pattern, real = f"{before}{dot}{gap()}{decoy}", False
    else:
        pattern, real = f"{before}{dot}{gap()}{cased('service')}{gap(False)}{silent}{target}{gap()}{body}", True
    wrap = rng.choice(["{0}", "OPTIONAL {{ {0} }}", "{{ {0} }} UNION {{ ?x ?y ?z }}",
                       "?s0 ?p0 ?o0 FILTER EXISTS {{ {0} }}", "{{ SELECT * WHERE {{ {0} }} }}", "MINUS {{ {0} }}"])
    return prologue + "SELECT * WHERE {" + gap() + wrap.format(pattern) + gap() + "}", real


def _oxigraph_calls(store: object, query: str, recorder: Recorder) -> bool | None:
    """Whether pyoxigraph, running ``query``, sent a request to ``recorder`` (None: it
    refused the query as malformed)."""
    import pyoxigraph as ox

    assert isinstance(store, ox.Store)
    before = recorder.hits
    try:
        list(store.query(query, use_default_graph_as_union=True))
    except SyntaxError:
        return None
    except (OSError, RuntimeError):
        pass
    return recorder.hits > before


def test_a_service_fuzzer_finds_no_call_the_guard_lets_through(serve, built_store) -> None:
    """Seeded: every fuzzed query that makes pyoxigraph itself send a request is refused by
    the guard, and every decoy that pyoxigraph runs without one is let through."""
    import pyoxigraph as ox

    from kg.sparqlguard import QueryRefused
    from kg.sparqloutbound import outbound, refuse_outbound
    from kg.vocab import PREFIXES

    seed = int(os.environ.get("KG_FUZZ_SEED", "30"))
    rng = random.Random(seed)
    recorder = Recorder()
    store = ox.Store()
    ex = "http://example.org/"
    for s, o in (("s", ex), ("s", ex + "o"), ("s", ex + "o.x")):
        store.add(ox.Quad(ox.NamedNode(ex + s), ox.NamedNode(ex + "p"), ox.NamedNode(o), ox.NamedNode(ex + "g")))
    store.add(ox.Quad(ox.NamedNode(ex + "s"), ox.NamedNode(ex + "p"), ox.Literal("lit"), ox.NamedNode(ex + "g")))
    called = passed = 0
    through_server: list[str] = []
    try:
        for step in range(250):
            query, real = _fuzzed(rng, recorder.port)
            calls = _oxigraph_calls(store, query, recorder)
            try:
                refuse_outbound(outbound(query, PREFIXES), ())
                refused = False
            except QueryRefused:
                refused = True
            where = f"(seed {seed}, step {step}) {query!r}"
            if calls:
                called += 1
                assert refused, "the guard let a SERVICE call through " + where
                if len(through_server) < 12:
                    through_server.append(query)
            elif calls is False and not real:
                passed += 1
                assert not refused, "the guard refused a query that calls nothing " + where
        assert called >= 100 and passed >= 20, (called, passed)
        # The same queries through kg serve's endpoint: refused, and no request sent.
        hits = recorder.hits
        with serve(built_store) as base:
            for query in through_server:
                r = httpx.post(f"{base}/sparql", data={"query": query}, headers={"Accept": "application/json"})
                assert r.status_code == 403 and "SERVICE is off" in r.json()["error"], (r.text, query)
        assert recorder.hits == hits
    finally:
        recorder.close()


def test_error_text_sent_to_clients_never_shows_a_server_path() -> None:
    from kg.errors import StoreError
    from kg.server.errors import EndpointError, from_kg_error, without_paths

    store = "/home/someone/.local/share/techkg/store"
    error = from_kg_error(StoreError(f"reading the store at {store} failed: IO error: "
                                     f"{store}/readers/view-01/000012.sst: No such file", hint=f"Check {store}."))
    assert "/home" not in error.message + error.hint and "(a path on the server)" in error.message
    assert "/tmp/x/y" not in EndpointError(503, "cannot open /tmp/x/y for reading", "see ~/x/y").message
    kept = "graph https://w3id.org/techkg/graph/reading, <http://x/a/b>, GET /sparql and /queries/technique"
    assert without_paths(kept) == kept


# -- nesting hidden behind ``<`` --------------------------------------------------------------

#: Brackets between a comparison's ``<`` and ``>``, which a lexer takes for an IRI, and a
#: string that opens inside such a ``<…>`` and so hides what follows from a lexer.
HIDDEN_DEPTH = [
    "SELECT * WHERE { FILTER(1<" + "(" * 60_000 + "2" + ")" * 60_000 + ">2) }",
    "SELECT * WHERE { ?a ?b ?c FILTER(?a<?b||'>'=?c) ?s <x#> ?o . " + "{" * 100 + "}" * 100 + " #'\n}",
    "SELECT ?x (1<" + "(" * 100 + "1" + ")" * 100 + ">0 AS ?y) WHERE {}",
    "SELECT * WHERE { ?s ?p ?o } ORDER BY (?o<" + "(" * 100 + "1" + ")" * 100 + ">0)",
]


@pytest.mark.parametrize("query", HIDDEN_DEPTH, ids=["comparison", "string-in-comparison", "select", "order-by"])
def test_nesting_behind_a_comparison_is_counted(query: str) -> None:
    from kg.sparqlguard import QueryRefused, check_query

    with pytest.raises(QueryRefused) as refused:
        check_query(query)
    assert refused.value.reason == "depth"


def test_kg_sparql_refuses_60000_levels_behind_a_comparison_at_once(kg_cli, built_store_path: Path) -> None:
    started = time.monotonic()
    out = kg_cli("sparql", HIDDEN_DEPTH[0], store=built_store_path)
    assert out.returncode != 0 and "nests" in out.stderr and time.monotonic() - started < 30
