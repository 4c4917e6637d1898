"""A bounded soak: 60 s of mixed cheap queries from 10 clients against a real `kg serve`
while runaway queries (cartesian joins, a sort that grows by hundreds of MB a second,
an optimiser that never finishes) are injected. The cheap queries are all answered (p95
reported), the server's memory stays under a bound, and it stops cleanly at the end."""

from __future__ import annotations

import contextlib
import shutil
import signal
import statistics
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.servers import kg_serve

pytestmark = pytest.mark.slow

SECONDS = 60
CLIENTS = 10
WORKERS = 2
QUERY_MEMORY_MIB = 256
#: Seconds a query may run: the runaways reach it (or the memory limit); the cheap queries,
#: even on a loaded CI machine, do not.
TIMEOUT = 5
CHEAP = [
    ("/sparql", {"query": "SELECT ?id WHERE { ?t a tkg:Technique ; skos:notation ?id } ORDER BY ?id LIMIT 10"}),
    ("/sparql", {"query": "ASK { ?t skos:notation 'kda' }"}),
    ("/sparql", {"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <https://w3id.org/techkg/graph/catalog> "
                          "{ ?s ?p ?o } }"}),
    ("/queries/ancestors", {"technique": "KDA"}),
    ("/queries/technique", {"technique": "Mamba2"}),
    ("/store", {"graph": "https://w3id.org/techkg/graph/ontology"}),
]
RUNAWAYS = [
    "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
    "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f",
    "SELECT * WHERE { " + " ".join(f"?s{i} ?p{i} ?o{i} ." for i in range(300)) + " }",
]


def _tree_rss(process: psutil.Process) -> int:
    total = 0
    for p in [process, *process.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def test_cheap_queries_stay_answered_while_runaways_are_stopped(built_store_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(built_store_dir, store)
    with kg_serve(store, "--timeout", str(TIMEOUT), "--workers", str(WORKERS), "--query-memory", str(QUERY_MEMORY_MIB),
                  ready="/sparql?query=ASK%7B%7D") as (proc, info):
        base = str(info["sparql"]).removesuffix("/sparql")
        server = psutil.Process(proc.pid)
        stop_at = time.monotonic() + SECONDS
        latencies: list[float] = []
        failures: list[str] = []
        runaway_codes: list[int] = []
        peak = [0]
        lock = threading.Lock()

        def client(offset: int) -> None:
            with httpx.Client(base_url=base, timeout=60) as http:
                i = offset
                while time.monotonic() < stop_at:
                    path, params = CHEAP[i % len(CHEAP)]
                    i += 1
                    started = time.perf_counter()
                    try:
                        r = http.get(path, params=params, headers={"Accept": "application/json"})
                    except httpx.HTTPError as error:
                        with lock:
                            failures.append(f"{path}: {type(error).__name__}")
                        continue
                    with lock:
                        if r.status_code == 200:
                            latencies.append(time.perf_counter() - started)
                        else:
                            failures.append(f"{path} {params}: {r.status_code} {r.text[:120]}")

        def injector() -> None:
            with httpx.Client(base_url=base, timeout=60) as http:
                i = 0
                while time.monotonic() < stop_at - 3:
                    r = http.post("/sparql", data={"query": RUNAWAYS[i % len(RUNAWAYS)]})
                    i += 1
                    with lock:
                        runaway_codes.append(r.status_code)
                    time.sleep(1.0)

        def watch() -> None:
            while time.monotonic() < stop_at:
                peak[0] = max(peak[0], _tree_rss(server))
                time.sleep(0.2)

        threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
        threads += [threading.Thread(target=injector), threading.Thread(target=watch)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        joined = time.monotonic() - stop_at
        children = server.children(recursive=True)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        stopped = time.monotonic() - started

    ordered = sorted(latencies)
    p50 = statistics.median(ordered)
    p95 = ordered[int(0.95 * len(ordered)) - 1]
    print(f"\nsoak: {len(ordered)} cheap queries from {CLIENTS} clients in {SECONDS} s beside "
          f"{len(runaway_codes)} runaways; p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
          f"max {ordered[-1] * 1000:.0f} ms; peak memory {peak[0] >> 20} MiB (server and workers); "
          f"clients done {joined:.1f} s after the end; stopped in {stopped:.1f} s")
    assert failures == []
    assert len(ordered) > 200
    assert runaway_codes and set(runaway_codes) == {503}  # each one stopped, at the time or memory limit
    assert p95 < TIMEOUT
    # Each worker may reach its limit (plus what the watchdog lets through between two
    # looks); the server and the fork server stay small.
    assert peak[0] < (WORKERS * (QUERY_MEMORY_MIB + 150) + 600) << 20, peak[0] >> 20
    assert proc.returncode == 0 and stopped < 5
    assert not (store / "serve.json").exists()
    # Workers, the fork server and the resource tracker follow the server within seconds.
    assert _lingering(children, within=5) == []


def _lingering(procs: list[psutil.Process], *, within: float) -> list[int]:
    """The pids of ``procs`` still running (zombies aside) after waiting up to ``within`` s."""
    deadline = time.monotonic() + within
    while True:
        alive = []
        for proc in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc.pid)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)
