"""Store benchmark (issue #2): bulk load, lineage closure and reading queue on the
synthetic corpus, side by side with pyoxigraph's own bulk loader and rdflib's
in-memory Graph, in one run.

    python -m bench.store                 # 100k papers ≈ 1.3M triples
    python -m bench.store --papers 10000  # quicker

Targets on a 2-core machine at 1.3M triples: ``kg import rdf`` ≥ 0.8× pyoxigraph's
``bulk_load`` throughput; lineage closure < 10 ms; reading queue < 1 s.
"""

from __future__ import annotations

import argparse
import json
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.corpus import generate

ROOT_TECHNIQUE = "https://w3id.org/techkg/id/technique/transformer"
READ = "https://w3id.org/techkg/id/status/read"
SKIPPED = "https://w3id.org/techkg/id/status/skipped"
PREFIXES = (
    "PREFIX tkg: <https://w3id.org/techkg/ns#>\nPREFIX prov: <http://www.w3.org/ns/prov#>\n"
)


def closure_query(technique: str) -> str:
    return PREFIXES + f"SELECT ?a WHERE {{ <{technique}> prov:wasDerivedFrom+ ?a }}"


def descendants_query(technique: str) -> str:
    return PREFIXES + f"SELECT ?d WHERE {{ ?d prov:wasDerivedFrom+ <{technique}> }}"


def plain_queue_query(technique: str) -> str:
    """The obvious formulation: the property path sits inside the join."""
    return PREFIXES + (
        f"SELECT DISTINCT ?paper WHERE {{ ?paper tkg:usesTechnique ?t . ?t prov:wasDerivedFrom* <{technique}> . "
        f"?paper tkg:readingStatus ?s FILTER(?s NOT IN (<{READ}>, <{SKIPPED}>)) }}"
    )


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def _time(fn: Any, runs: int) -> tuple[float, float, Any]:
    result = fn()  # warm-up
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
    p50, p95 = _percentiles(samples)
    return p50, p95, result


RDFLIB_CHILD = r"""
import json, sys, time
import rdflib
path, queries = sys.argv[1], json.loads(sys.argv[2])
start = time.perf_counter()
g = rdflib.Graph()
g.parse(path, format="nt")
print(json.dumps({"what": "load", "seconds": time.perf_counter() - start, "triples": len(g)}), flush=True)
for name, text, bindings in queries:
    start = time.perf_counter()
    init = {k: rdflib.URIRef(v) for k, v in bindings.items()}
    rows = len(list(g.query(text, initBindings=init)))
    print(json.dumps({"what": name, "seconds": time.perf_counter() - start, "rows": rows}), flush=True)
"""


def run_rdflib(path: Path, queries: list[tuple[str, str, dict[str, str]]], cap: float) -> dict[str, Any]:
    """Load and query with rdflib in a child process; anything over ``cap`` seconds is cut."""
    proc = subprocess.Popen([sys.executable, "-c", RDFLIB_CHILD, str(path), json.dumps(queries)],
                            stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    results: dict[str, Any] = {}
    expected = ["load"] + [name for name, _, _ in queries]
    for name in expected:
        try:
            line = lines.get(timeout=cap)
        except queue.Empty:
            results[name] = {"capped": cap}
            proc.kill()
            break
        if line is None:
            for missing in expected:
                results.setdefault(missing, {"failed": True})
            break
        record = json.loads(line)
        results[record["what"]] = record
    proc.kill()
    proc.wait()
    for name in expected:
        results.setdefault(name, {"capped": cap})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rdflib-cap", type=float, default=360.0, help="seconds allowed per rdflib step")
    parser.add_argument("--skip-rdflib", action="store_true")
    args = parser.parse_args()

    import pyoxigraph as ox

    import queries
    from kg.build import build
    from kg.store.embedded import OxigraphStore

    work = Path(tempfile.mkdtemp(prefix="kg-bench-store-"))
    try:
        corpus = generate(args.papers, seed=42, out=work / "corpus.nt")
        print(f"corpus: {corpus.triples:,} triples, {corpus.papers:,} papers, {corpus.techniques} synthetic "
              f"techniques (deepest chain {corpus.deepest_depth}), file {corpus.path.stat().st_size / 1e6:.0f} MB")

        # 1. Bulk load: `kg import rdf` (the real CLI) vs pyoxigraph's own bulk_load.
        kg_store = work / "kg-store"
        store = OxigraphStore(kg_store)
        build(store, validate=False)
        store.close()
        kg = Path(sys.executable).with_name("kg")
        start = time.perf_counter()
        out = subprocess.run([str(kg), "--store", str(kg_store), "import", "rdf", str(corpus.path),
                              "--graph", "bench", "--json"], capture_output=True, text=True, check=True)
        kg_seconds = time.perf_counter() - start
        loaded = json.loads(out.stdout)["triples"]
        raw_dir = work / "raw-store"
        start = time.perf_counter()
        raw = ox.Store(str(raw_dir))
        raw.bulk_load(path=str(corpus.path), format=ox.RdfFormat.N_TRIPLES, to_graph=ox.NamedNode("urn:bench"))
        raw.flush()
        raw_seconds = time.perf_counter() - start
        del raw

        # 2 and 3: queries on the loaded kg store.
        store = OxigraphStore(kg_store)
        deepest = corpus.deepest
        closure = _time(lambda: store.select(closure_query(deepest)), args.runs)
        descendants = _time(lambda: store.select(descendants_query(ROOT_TECHNIQUE)), args.runs)
        named_queue = _time(lambda: queries.run(store, "reading-queue-lineage", {"technique": ROOT_TECHNIQUE}),
                            max(5, args.runs // 4))
        plain_queue = _time(lambda: store.select(plain_queue_query(ROOT_TECHNIQUE)), 3)
        store.close()

        rdflib: dict[str, Any] = {}
        if not args.skip_rdflib:
            rdflib = run_rdflib(corpus.path, [
                ("closure", closure_query(deepest), {}),
                ("descendants", descendants_query(ROOT_TECHNIQUE), {}),
                ("queue", queries.get("reading-queue-lineage").text, {"technique": ROOT_TECHNIQUE}),
            ], args.rdflib_cap)

        def rd(name: str, key: str = "seconds") -> str:
            rec = rdflib.get(name, {})
            if "capped" in rec:
                return f"> {rec['capped']:.0f} s (capped)"
            if "failed" in rec:
                return "failed (see stderr)"
            return f"{rec[key] * 1000:.1f} ms" if key == "seconds" and name != "load" else f"{rec.get(key, 0):.1f} s"

        kg_rate = loaded / kg_seconds
        raw_rate = corpus.triples / raw_seconds
        print()
        print(f"{'measure':38} {'kg (embedded)':>16} {'baseline':>34} {'ratio':>9}  target")
        print(f"{'bulk load, triples/s':38} {kg_rate:>16,.0f} {'pyoxigraph bulk_load ' + format(raw_rate, ',.0f'):>34} "
              f"{kg_rate / raw_rate:>8.2f}x  >= 0.80x")
        if rdflib and "triples" in rdflib.get("load", {}):
            rl = rdflib["load"]["triples"] / rdflib["load"]["seconds"]
            print(f"{'':38} {'':>16} {'rdflib Graph.parse ' + format(rl, ',.0f'):>34} {kg_rate / rl:>8.2f}x")
        elif rdflib:
            print(f"{'':38} {'':>16} {'rdflib Graph.parse ' + rd('load'):>34}")
        print(f"{'  (kg: whole CLI run incl. start-up)':38} {kg_seconds:>15.1f}s {raw_seconds:>33.1f}s")
        for label, measured, name, target in (
            (f"lineage closure, depth {corpus.deepest_depth}", closure, "closure", "< 10 ms"),
            ("descendants of the Transformer", descendants, "descendants", "< 10 ms"),
            ("reading queue (named query)", named_queue, "queue", "< 1000 ms"),
        ):
            base = rd(name) if rdflib else "n/a"
            ratio = ""
            rec = rdflib.get(name, {})
            if "seconds" in rec:
                ratio = f"{rec['seconds'] / measured[0]:>8.0f}x"
            print(f"{label + ' p50/p95':38} {measured[0] * 1000:>7.2f}/{measured[1] * 1000:<7.2f}ms "
                  f"{'rdflib ' + base:>34} {ratio:>9}  {target}")
        print(f"{'reading queue, plain formulation p50':38} {plain_queue[0] * 1000:>14.0f}ms "
              f"{'(path inside the join, same store)':>34} {plain_queue[0] / named_queue[0]:>8.1f}x slower")
        rows = len(named_queue[2])
        print(f"\nreading queue rows: {rows}; closure rows: {len(closure[2])}; descendants: {len(descendants[2])}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
