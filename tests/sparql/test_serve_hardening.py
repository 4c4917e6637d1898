"""`kg serve` as a process: it answers only to its own host names, keeps secrets out of
its log and its command line, stops within seconds even while queries run, and a
dead server's serve.json points nobody anywhere."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.servers import KG, kg_serve

READY = "/sparql?query=ASK%7B%7D"
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"


def test_every_request_must_be_addressed_to_a_host_the_server_answers_to(built_store_path: Path) -> None:
    with kg_serve(built_store_path, "--allow-host", "kg.internal", ready=READY) as (_proc, info):
        base = str(info["sparql"]).removesuffix("/sparql")
        port = base.rsplit(":", 1)[1]
        for path in ("/reading", "/sparql?query=ASK%7B%7D", "/store?default", "/queries", "/"):
            rebound = httpx.get(base + path, headers={"Host": f"attacker.example:{port}"})
            assert rebound.status_code == 400 and "does not answer to the host" in rebound.text, path
            assert "TechKG" not in rebound.text and "reading" not in rebound.text.split("hint")[0]
        assert httpx.get(base + "/reading", headers={"Host": f"127.0.0.1:{port}"}).status_code == 200
        assert httpx.get(base + "/reading", headers={"Host": f"localhost:{port}"}).status_code == 200
        assert httpx.get(base + "/reading", headers={"Host": "kg.internal"}).status_code == 200
        # A loopback server is reached by loopback names only, not by another IP literal.
        assert httpx.get(base + "/reading", headers={"Host": f"192.168.1.20:{port}"}).status_code == 400


def test_an_over_long_get_url_is_answered_414_with_the_way_to_post_and_a_long_one_still_runs(
        built_store_path: Path) -> None:
    import http.client
    from urllib.parse import quote, urlsplit

    from kg.server.security import MAX_URL_BYTES

    padding = "#" + "x" * 1000 + "\n"  # a comment line: the query stays valid at any length
    long_enough = "ASK {}\n" + padding * (200_000 // len(padding))  # under the guard's 256 KiB
    too_long = "ASK {}\n" + padding * (MAX_URL_BYTES // len(padding) + 8)

    def get(url: str, query: str) -> tuple[int, bytes]:  # http.client: httpx caps URLs at 64 KiB
        parts = urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        try:
            connection.request("GET", f"{parts.path}?query={quote(query)}",
                               headers={"Accept": "application/sparql-results+json"})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    with kg_serve(built_store_path, ready=READY) as (_proc, info):
        status, body = get(str(info["sparql"]), long_enough)
        assert status == 200 and json.loads(body)["boolean"] is True
        status, body = get(str(info["sparql"]), too_long)
        assert status == 414, body[:300]
        assert b"longer than the server's limit" in body and b"POST" in body
        posted = httpx.post(str(info["sparql"]), content=long_enough.encode(), timeout=60,
                            headers={"Content-Type": "application/sparql-query",
                                     "Accept": "application/sparql-results+json"})
        assert posted.status_code == 200 and posted.json()["boolean"] is True
        assert get(str(info["sparql"]), "ASK {}")[0] == 200  # the server is still up


def test_the_workbench_never_answers_cross_origin_even_with_cors_origins(built_store_path: Path) -> None:
    with kg_serve(built_store_path, "--cors-origin", "http://tools.example", ready=READY) as (proc, info):
        base = str(info["sparql"]).removesuffix("/sparql")
        for path in ("/reading", "/", "/techniques/kda", "/static/app.js"):
            r = httpx.get(base + path, headers={"Origin": "http://tools.example"})
            assert r.status_code == 200 and "access-control-allow-origin" not in r.headers, path
        pre = httpx.options(base + "/reading/status", headers={
            "Origin": "http://tools.example", "Access-Control-Request-Method": "POST"})
        assert "access-control-allow-origin" not in pre.headers
        sparql = httpx.get(base + READY, headers={"Origin": "http://tools.example"})
        assert sparql.headers["access-control-allow-origin"] == "http://tools.example"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert "http://tools.example can read the whole graph" in " ".join(err.split())


@pytest.mark.parametrize("origin", ["null", "http://tools.example/page", "tools.example", "file://"])
def test_an_origin_that_is_not_one_is_refused_before_serving(built_store_path: Path, origin: str) -> None:
    proc = subprocess.run([str(KG), "--store", str(built_store_path), "serve", "--port", "0", "--cors-origin", origin],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "is not an origin" in proc.stderr and "Traceback" not in proc.stderr
    assert not (built_store_path / "serve.json").exists()


def test_the_access_log_keeps_paths_and_names_but_no_values(built_store_path: Path) -> None:
    with kg_serve(built_store_path, "--log-level", "info", ready=READY) as (proc, info):
        url = str(info["sparql"])
        httpx.get(url, params={"query": "ASK { ?s ?p 'private words' }", "token": "s3cret-in-url"})
        httpx.get(url.removesuffix("/sparql") + "/queries/technique", params={"technique": "Mamba2"})
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    log = out + err
    assert "GET /sparql?query=…&token=… HTTP/1.1" in err and "/queries/technique?technique=…" in err
    assert "s3cret-in-url" not in log and "private" not in log and "Mamba2" not in log
    assert "GET /" not in out  # stdout holds the addresses alone, for a script to read


def test_the_token_comes_from_a_file_or_the_environment_and_a_command_line_token_is_warned(
        built_store_path: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("t0ken-from-a-file\n")
    update = 'INSERT DATA { GRAPH <https://w3id.org/techkg/graph/import/t> { <http://x/a> <http://x/b> "c" } }'
    with kg_serve(built_store_path, "--allow-update", "--token-file", str(token_file), ready=READY) as (proc, info):
        url = str(info["sparql"])
        assert httpx.post(url, data={"update": update}, headers={"Authorization": "Bearer wrong"}).status_code == 403
        ok = httpx.post(url, data={"update": update}, headers={"Authorization": "Bearer t0ken-from-a-file"})
        assert ok.status_code == 204
        assert "t0ken-from-a-file" not in " ".join(psutil_cmdline(proc.pid))
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert "warning" not in err
    env = {**os.environ, "KG_SERVE_TOKEN": "t0ken-from-env"}
    with kg_serve(built_store_path, "--allow-update", ready=READY, env=env) as (proc, info):
        ok = httpx.post(str(info["sparql"]), data={"update": update},
                        headers={"Authorization": "Bearer t0ken-from-env"})
        assert ok.status_code == 204
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert "warning" not in err
    with kg_serve(built_store_path, "--allow-update", "--token", "visible", ready=READY) as (proc, _info):
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert "--token shows in the process list" in " ".join(err.split())


def psutil_cmdline(pid: int) -> list[str]:
    import psutil

    return list(psutil.Process(pid).cmdline())


def _wait_until_a_worker_runs(pid: int, within: float = 30) -> None:
    import psutil

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        workers = []
        for child in psutil.Process(pid).children(recursive=True):
            try:  # a short-lived child may end between the listing and the look
                if child.ppid() != pid:
                    child.cpu_percent(None)
                    workers.append(child)
            except psutil.Error:
                pass
        time.sleep(0.3)
        use = []
        for worker in workers:
            try:
                use.append(worker.cpu_percent(None))
            except psutil.Error:
                pass
        if max(use, default=0.0) > 5:  # an idle worker uses none; a busy one what the machine gives it
            return
    raise AssertionError("no query worker started the queries")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_signal_stops_the_server_within_seconds_while_runaway_queries_run(built_store_path: Path,
                                                                            stop: signal.Signals) -> None:
    with kg_serve(built_store_path, "--timeout", "600", "--workers", "2", ready=READY) as (proc, info):
        url = str(info["sparql"])
        codes: list[int] = []
        threads = [threading.Thread(target=lambda: codes.append(
            httpx.post(url, data={"query": RUNAWAY}, timeout=120).status_code)) for _ in range(3)]
        for t in threads:
            t.start()
        _wait_until_a_worker_runs(proc.pid)
        time.sleep(0.5)  # the third request reaches the queue
        started = time.monotonic()
        proc.send_signal(stop)
        proc.communicate(timeout=60)
        stopped = time.monotonic() - started
        for t in threads:
            t.join()
    assert stopped < 5, stopped
    assert codes == [503, 503, 503]  # told the server stops, not left hanging
    assert not (built_store_path / "serve.json").exists()
    # The store is released: a writer opens it at once (no lock held by a leftover process).
    writer = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                             "from kg.store.embedded import OxigraphStore; "
                             "OxigraphStore(Path(sys.argv[1]), command='a test').close()", str(built_store_path)],
                            capture_output=True, text=True, timeout=120)
    assert writer.returncode == 0, writer.stderr


def test_a_dead_servers_serve_json_is_not_offered_as_the_way_in(built_store_path: Path, tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (built_store_path / "serve.json").write_text(json.dumps(
        {"sparql": "http://127.0.0.1:9/sparql", "queries": "http://127.0.0.1:9/queries", "pid": dead.pid}))
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from kg.store.embedded import OxigraphStore; "
                               "s = OxigraphStore(Path(sys.argv[1]), command='a test'); print('ready', flush=True); "
                               "time.sleep(60)", str(built_store_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        proc = subprocess.run([str(KG), "--store", str(built_store_path), "build"], capture_output=True,
                              text=True, timeout=120)
    finally:
        holder.kill()
        holder.communicate()
    assert proc.returncode != 0
    assert "127.0.0.1:9" not in proc.stderr and f"pid {dead.pid}" not in proc.stderr
