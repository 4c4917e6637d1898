"""Named-query benchmark (issues #5, #15): every query of ``queries/*.rq`` on the synthetic
corpus, p50 and p95, on the embedded store, on triplestore servers through RemoteStore
(SPARQL 1.1 Protocol): Oxigraph and Virtuoso 7, and on rdflib's in-memory Dataset, each
with a time cap.

    python -m bench.queries                      # 100k papers ≈ 1.3M triples; Oxigraph server
    python -m bench queries --store virtuoso     # Virtuoso 7 beside the embedded store
    python -m bench queries --store all          # both servers
    python -m bench.queries --papers 10000       # quicker
    python -m bench.queries --skip-rdflib        # without the rdflib baseline

The corpus goes into the embedded store through its bulk path (``kg import rdf``, the
real CLI) on top of ``kg build``; the embedded store's quads go into an Oxigraph
server's directory offline (``oxigraph load``) before ``oxigraph serve``. The server
is measured twice: as started plainly, where every query names the union of the named
graphs in the protocol, and with ``--union-default-graph``, which RemoteStore detects.
Virtuoso (Debian's 7.2.5, started as the tests start it, with more buffers for the
corpus) gets the corpus through its own bulk loader (``ld_dir``, as its operators load
large dumps) into an ``import/`` graph, and the catalog through ``kg build``.
Every backend runs the very same query: parameters are resolved once and bound by the
store (``GraphStore.query``: VALUES blocks; for Virtuoso, whose capabilities say it
misjoins them, constants), with the standard prefixes declared.

Each backend runs in a child process, so a query past the cap is cut off (a running
pyoxigraph query cannot be interrupted otherwise) and reported as capped.

Targets on a 2-core machine at 1.3M triples: every named query < 1 s on the embedded
store (p95); the lineage queries (ancestors, descendants, lineage-subgraph) < 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.corpus import BASE, generate

LINEAGE = ("ancestors", "descendants", "lineage-subgraph")
#: Parameters per query; any other required parameter gets a default for its type.
OVERRIDES: dict[str, dict[str, str]] = {
    "descendants": {"technique": "https://w3id.org/techkg/id/technique/transformer"},
    "reading-queue-lineage": {"technique": "https://w3id.org/techkg/id/technique/gated-deltanet"},
    "compare-techniques": {"technique": "GDN,KDA,Mamba2"},
    "papers-by-author": {"author": "Author 1234"},
    "paper-techniques": {"paper": BASE + "paper/4242"},
    "new-since": {"since": "2026-11-01"},
    "reading-queue": {"section": "category 3"},
    "stale-repositories": {"months": "3"},
    "fact-provenance": {"subject": "https://w3id.org/techkg/id/technique/kda"},
}
TYPE_DEFAULTS = {"technique": "KDA", "paper": "1910.02054", "category": "attention", "string": "a",
                 "integer": "1", "decimal": "1.5", "boolean": "true", "date": "2026-01-01",
                 "datetime": "2026-01-01T00:00:00Z", "status": "read",
                 "iri": "https://w3id.org/techkg/id/technique/kda"}

CHILD = r"""
import json, signal, sys, time
kind, source, texts_path, runs, cap = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
texts = json.load(open(texts_path))

class Capped(Exception):
    pass

def emit(**record):
    print(json.dumps(record), flush=True)

start = time.perf_counter()

def terms(values):
    import pyoxigraph as ox
    return [next(iter(ox.parse(f"<urn:s> <urn:p> {v} .".encode(), format=ox.RdfFormat.N_TRIPLES))).object
            for v in values]

if kind in ("embedded", "remote"):
    if kind == "embedded":
        from pathlib import Path
        from kg.store.embedded import OxigraphStore
        store = OxigraphStore(Path(source))
    else:
        from kg.store.remote import RemoteStore
        store = RemoteStore.from_spec(source + f";timeout={cap + 5}")
    def run(entry):
        bindings = {k: (terms(v) if len(v) != 1 else terms(v)[0]) for k, v in entry["bindings"].items()}
        return store.query(entry["query"], bindings or None)
else:
    import rdflib
    from kg.vocab import PREFIXES
    def alarm(signum, frame):
        raise Capped()
    signal.signal(signal.SIGALRM, alarm)
    dataset = rdflib.Dataset(default_union=True)
    dataset.parse(source, format="nquads")
    def run(entry):
        return list(dataset.query(entry["text"], initNs=PREFIXES))
emit(what="load", seconds=time.perf_counter() - start)

def timed(text):
    if kind == "rdflib":
        signal.setitimer(signal.ITIMER_REAL, cap)
    t = time.perf_counter()
    try:
        result = run(text)
    finally:
        if kind == "rdflib":
            signal.setitimer(signal.ITIMER_REAL, 0)
    return time.perf_counter() - t, result

for name, text in texts.items():
    emit(what="start", name=name)
    try:
        warm, result = timed(text)
        samples = [warm]
        if warm < cap:
            n = max(1, min(runs, int(3 * cap / max(warm, 1e-6))))
            samples = [timed(text)[0] for _ in range(n)]
        rows = result if isinstance(result, bool) else len(result)
        emit(what=name, samples=samples, rows=int(rows), capped=warm >= cap)
    except Capped:
        emit(what=name, capped=True)
    except Exception as exc:
        if kind == "remote" and "stopped in the middle" in (getattr(exc, "hint", None) or ""):
            emit(what=name, capped=True)  # the server's --timeout-s (the cap) cut its answer short
        elif kind == "remote" and "did not finish the" in str(exc):
            emit(what=name, capped=True)  # no answer within the client's timeout (the cap + 5 s)
        else:
            emit(what=name, error=type(exc).__name__ + ": " + str(exc)[:160])
"""


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def query_texts(store: Any, deepest: str) -> dict[str, dict[str, Any]]:
    """Each named query with its parameters resolved: the query and its bindings (as
    N-Triples terms) that the stores run, and the text with them inlined as VALUES
    blocks for rdflib."""
    import queries
    from kg.resolve import Resolver
    from kg.sparqltext import inject_values
    from kg.store.base import prefix_block

    resolve = Resolver(store)
    out = {}
    for named in queries.all_queries():
        overrides = {"technique": deepest} if named.name in ("ancestors", "lineage-subgraph") else {}
        overrides.update(OVERRIDES.get(named.name, {}))
        raw = {p.name: overrides.get(p.name, TYPE_DEFAULTS[p.type]) for p in named.params if p.required}
        raw.update({k: v for k, v in overrides.items() if named.param(k)})
        text, bindings = queries.prepare(named, raw, resolve)
        full = inject_values(text, bindings) if bindings else text
        out[named.name] = {"query": text, "text": prefix_block(full) + full,
                           "bindings": {k: [str(t) for t in (v if isinstance(v, list) else [v])]
                                        for k, v in bindings.items()}}
    return out


def run_backend(kind: str, source: str, texts: dict[str, dict[str, Any]], *, runs: int, cap: float, work: Path,
                load_cap: float = 900.0) -> dict[str, Any]:
    """Run every query on one backend in a child process; a query that outlives its
    allowance gets the child killed and restarted for the queries after it."""
    results: dict[str, Any] = {}
    pending = dict(texts)
    while pending:
        path = work / f"texts-{kind}.json"
        path.write_text(json.dumps(pending), encoding="utf-8")
        proc = subprocess.Popen([sys.executable, "-c", CHILD, kind, source, str(path), str(runs), str(cap)],
                                stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
        lines: queue.Queue[str | None] = queue.Queue()

        def pump(p: subprocess.Popen[str] = proc, q: queue.Queue[str | None] = lines) -> None:
            assert p.stdout is not None
            for line in p.stdout:
                q.put(line)
            q.put(None)

        threading.Thread(target=pump, daemon=True).start()
        current, deadline = "load", time.monotonic() + load_cap
        try:
            while True:
                try:
                    line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                except queue.Empty:
                    results[current] = {"capped": True}
                    pending.pop(current, None)
                    break
                if line is None:  # the child ended
                    for name in list(pending):
                        results.setdefault(name, {"error": "the benchmark child stopped"})
                        pending.pop(name)
                    break
                record = json.loads(line)
                if record["what"] == "load":
                    results.setdefault("load", record)
                elif record["what"] == "start":
                    current = record["name"]
                    deadline = time.monotonic() + cap * (runs + 1) + 30
                else:
                    results[record["what"]] = record
                    pending.pop(record["what"], None)
                    if not pending:
                        break
        finally:
            proc.kill()
            proc.wait()
        if current == "load" and "load" not in results:
            for name in pending:
                results[name] = {"error": "could not load within the cap"}
            break
    return results


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_oxigraph(location: Path, cap: float, *flags: str) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = _free_port()
    exe = Path(sys.executable).with_name("oxigraph")
    proc = subprocess.Popen([str(exe), "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}",
                             "--timeout-s", str(int(cap) + 1), *flags],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        try:
            httpx.get(f"{base}/query", params={"query": "ASK {}"}, timeout=1)
            return proc, base
        except httpx.HTTPError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise RuntimeError("oxigraph serve did not start")


def load_oxigraph(location: Path, nquads: Path) -> float:
    """The embedded store's quads into an Oxigraph server's directory, offline (``oxigraph
    load``, as its operators load a dump before ``oxigraph serve``); the seconds it took."""
    exe = Path(sys.executable).with_name("oxigraph")
    start = time.perf_counter()
    subprocess.run([str(exe), "load", "--location", str(location), "--file", str(nquads)], check=True,
                   capture_output=True)
    return time.perf_counter() - start


def run_virtuoso(kg: Path, corpus: Path, texts: dict[str, dict[str, Any]], args: argparse.Namespace,
                 work: Path) -> dict[str, Any]:
    """Virtuoso 7 as the tests start it (loopback, free ports, update granted, limits as
    shipped but for its buffers), the catalog by ``kg build``, the corpus by its bulk loader."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from kg.graphs import IMPORT_PREFIX
    from tests.servers import virtuoso_server

    with virtuoso_server(buffers=args.virtuoso_buffers) as server:
        spec = f"{server.base}/sparql"
        env = {**os.environ, "KG_STORE": spec}
        subprocess.run([str(kg), "build", "--no-validate"], check=True, capture_output=True, env=env)
        shutil.copy(corpus, server.directory / "corpus.nt")
        start = time.perf_counter()
        server.isql(f"ld_dir('{server.directory}', 'corpus.nt', '{IMPORT_PREFIX}bench');",
                    "rdf_loader_run();", "checkpoint;")
        seconds = time.perf_counter() - start
        triples = sum(1 for _ in corpus.open("rb"))
        print(f"load: Virtuoso bulk loader {seconds:.1f} s ({triples / seconds:,.0f} triples/s)", flush=True)
        print("Virtuoso 7 ...", flush=True)
        return run_backend("remote", spec, texts, runs=args.runs, cap=args.cap, work=work)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15, help="timed runs per query after one warm-up")
    parser.add_argument("--cap", type=float, default=20.0, help="seconds allowed per query run")
    parser.add_argument("--rdflib-runs", type=int, default=3)
    parser.add_argument("--skip-rdflib", action="store_true")
    parser.add_argument("--skip-union", action="store_true", help="skip the --union-default-graph server run")
    parser.add_argument("--store", choices=("oxigraph", "virtuoso", "all"), default="oxigraph",
                        help="the triplestore servers measured beside the embedded store")
    parser.add_argument("--virtuoso-buffers", type=int, default=170_000,
                        help="Virtuoso's NumberOfBuffers (8 KB each; the shipped 10,000 suits a small graph)")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args()

    import pyoxigraph as ox

    from kg.build import build
    from kg.store.embedded import OxigraphStore

    work = Path(tempfile.mkdtemp(prefix="kg-bench-queries-"))
    kg = Path(sys.executable).with_name("kg")
    server: subprocess.Popen[bytes] | None = None
    try:
        corpus = generate(args.papers, seed=42, out=work / "corpus.nt")
        print(f"corpus: {corpus.triples:,} triples, {corpus.papers:,} papers, {corpus.techniques} synthetic "
              f"techniques (deepest lineage chain {corpus.deepest_depth})", flush=True)

        embedded_dir = work / "embedded"
        with OxigraphStore(embedded_dir) as store:
            build(store, validate=False)
        start = time.perf_counter()
        subprocess.run([str(kg), "--store", str(embedded_dir), "import", "rdf", str(corpus.path), "--graph", "bench",
                        "--no-link", "--json"], check=True, capture_output=True)
        embedded_load = time.perf_counter() - start

        with OxigraphStore(embedded_dir) as store:
            texts = query_texts(store, corpus.deepest)
            nquads = work / "dataset.nq"
            with nquads.open("wb") as fh:
                store.dump(fh, fmt=ox.RdfFormat.N_QUADS)

        oxigraph = args.store in ("oxigraph", "all")
        spec = ""
        if oxigraph:
            remote_load = load_oxigraph(work / "oxigraph", nquads)
            server, base = start_oxigraph(work / "oxigraph", args.cap)
            spec = f"{base}/query;update=/update;gsp=/store"
            print(f"load: kg import rdf, embedded bulk path {embedded_load:.1f} s "
                  f"({corpus.triples / embedded_load:,.0f} triples/s); the same quads into the Oxigraph "
                  f"server's directory offline (oxigraph load) {remote_load:.1f} s", flush=True)

        results: dict[str, dict[str, Any]] = {}
        print(f"embedded: {len(texts)} queries ...", flush=True)
        results["embedded"] = run_backend("embedded", str(embedded_dir), texts, runs=args.runs, cap=args.cap, work=work)
        if oxigraph and server is not None:
            print("remote Oxigraph server ...", flush=True)
            results["remote"] = run_backend("remote", spec, texts, runs=args.runs, cap=args.cap, work=work)
            stop(server)
            server = None
        if args.store in ("virtuoso", "all"):
            results["virtuoso"] = run_virtuoso(kg, corpus.path, texts, args, work)
        if oxigraph and not args.skip_union:
            server, base = start_oxigraph(work / "oxigraph", args.cap, "--union-default-graph")
            print("remote Oxigraph server, --union-default-graph ...", flush=True)
            results["union"] = run_backend("remote", f"{base}/query", texts, runs=args.runs, cap=args.cap, work=work)
            stop(server)
            server = None
        if not args.skip_rdflib:
            print("rdflib Dataset (in memory) ...", flush=True)
            results["rdflib"] = run_backend("rdflib", str(nquads), texts, runs=args.rdflib_runs, cap=args.cap,
                                            work=work)
        report(results, list(texts), args, corpus.triples)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    finally:
        if server is not None:
            stop(server)
        shutil.rmtree(work, ignore_errors=True)


def _ms(value: float) -> str:
    return f"{value * 1000:.2f}" if value < 0.01 else f"{value * 1000:.1f}" if value < 10 else f"{value * 1000:.0f}"


def _cell(record: dict[str, Any] | None, cap: float, base: float | None) -> tuple[str, str]:
    if record is None:
        return "skipped", ""
    if record.get("error"):
        return "error", ""
    if record.get("capped") and not record.get("samples"):
        return f"> {cap:.0f} s", f">{cap / base:.0f}x" if base else ""
    p50, p95 = percentiles(record["samples"])
    text = f"{_ms(p50)}/{_ms(p95)}" + (" cap" if record.get("capped") else "")
    return text, (f"{p50 / base:.1f}x" if base else "")


def report(results: dict[str, dict[str, Any]], names: list[str], args: argparse.Namespace, triples: int) -> None:
    load = results.get("rdflib", {}).get("load", {})
    if "seconds" in load:
        print(f"rdflib Dataset.parse of the same dataset: {load['seconds']:.0f} s")
    columns = [k for k in ("remote", "union", "virtuoso", "rdflib") if k in results]
    titles = {"remote": "Oxigraph server", "union": "Oxigraph, union graph", "virtuoso": "Virtuoso 7",
              "rdflib": "rdflib"}
    head = f"{'named query':28} {'rows':>7} {'embedded ms p50/p95':>22}"
    for key in columns:
        head += f"  {titles[key] + ' ms':>24} {'ratio':>7}"
    head += "  target"
    print()
    print(head)
    print("-" * len(head))
    missed = []
    for name in names:
        embedded = results["embedded"].get(name)
        base = percentiles(embedded["samples"])[0] if embedded and embedded.get("samples") else None
        text, _ = _cell(embedded, args.cap, None)
        rows = embedded.get("rows", "") if embedded else ""
        line = f"{name:28} {rows!s:>7} {text:>22}"
        for key in columns:
            cell, ratio = _cell(results[key].get(name), args.cap, base)
            line += f"  {cell:>24} {ratio:>7}"
        limit = 0.010 if name in LINEAGE else 1.0
        p95 = percentiles(embedded["samples"])[1] if embedded and embedded.get("samples") else float("inf")
        ok = p95 < limit and not (embedded or {}).get("capped")
        if not ok:
            missed.append(name)
        line += f"  {'<10 ms' if name in LINEAGE else '<1 s'} {'ok' if ok else 'MISSED'}"
        print(line)
    print()
    print(f"{len(names)} named queries on {triples:,} corpus triples (plus the built catalog); ratios are "
          f"p50 against the embedded store's p50; cap {args.cap:.0f} s per run.")
    print("targets missed: " + (", ".join(missed) if missed else "none"))
    for backend in ["embedded", *columns]:
        for name, record in results.get(backend, {}).items():
            if isinstance(record, dict) and record.get("error"):
                print(f"  {backend}: {name}: {record['error']}")


if __name__ == "__main__":
    main()
