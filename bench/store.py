"""Store benchmark: everyday commands against today's code, then bulk load, validation,
lineage closure and reading queue on the synthetic corpus, side by side with pyoxigraph's
own bulk loader and rdflib's in-memory Graph, in one run.

    python -m bench.store                   # 100k papers ≈ 1.3M triples
    python -m bench.store --papers 10000    # quicker
    python -m bench.store --everyday-only   # only the everyday commands

Everyday commands (issue #13), each the real ``kg`` process, timed against the same command
of the code before issue #13 (``--baseline-rev``, checked out with ``git archive`` into a
temporary folder) in the same run: a first ``kg build`` < 3 s, a ``kg build`` with nothing
changed < 1 s, ``kg validate`` on the built graph < 1.5 s.

Targets on a 2-core machine at 1.3M triples: ``kg import rdf`` ≥ 0.8× pyoxigraph's
``bulk_load`` throughput; ``kg validate`` after it ≤ 0.5× the bulk load's time with memory
flat (about a reader's); lineage closure < 10 ms; reading queue < 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
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


#: The main commit issue #13 was filed against: "today's" code for the everyday baselines.
BASELINE_REV = "e1f19fd"
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Timed:
    wall: float
    cpu: float
    rss_mb: float
    code: int
    out: str


def run_kg(args: list[str], *, code: Path | None = None, check: bool = True) -> Timed:
    """One real ``kg`` process (of ``code``, a checkout, or of this tree): wall and CPU
    seconds and peak memory, from the child's own rusage."""
    env = {**os.environ, "PYTHONPATH": str(code or ROOT), "COLUMNS": "120"}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from kg.cli import main; sys.argv[0] = 'kg'; main()",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                            cwd=code or ROOT)  # `python -c` puts the working directory first on sys.path
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise RuntimeError(f"kg {' '.join(args)} failed ({proc.returncode}):\n{out[-2000:]}")
    return Timed(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, out)


def baseline_checkout(rev: str, into: Path) -> Path | None:
    """The tree at ``rev`` in ``into`` (git archive), or None when git cannot give it."""
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _median(samples: list[Timed]) -> Timed:
    return sorted(samples, key=lambda t: t.wall)[len(samples) // 2]


def everyday(work: Path, rev: str, runs: int) -> None:
    """First build, a build with nothing changed, validation: this code against ``rev``."""
    old = baseline_checkout(rev, work / "baseline")
    rows: list[tuple[str, Timed, Timed | None, str]] = []

    def measure(label: str, target: str, command: list[str], fresh: bool, old_command: list[str] | None = None,
                setup: list[list[str]] | None = None) -> None:
        results: dict[str, Timed | None] = {}
        for name, code in (("new", None), ("old", old)):
            if name == "old" and code is None:
                results[name] = None
                continue
            samples = []
            for i in range(runs):
                store = work / f"{name}-{label.split()[0]}-{i if fresh else 0}"
                if fresh:
                    shutil.rmtree(store, ignore_errors=True)
                for step in setup or []:
                    run_kg(["--store", str(store), *step], code=code)
                samples.append(run_kg(["--store", str(store), *(old_command if name == "old" and old_command
                                                                 else command)], code=code, check=False))
            results[name] = _median(samples)
        new = results["new"]
        assert new is not None
        rows.append((label, new, results["old"], target))

    measure("first build", "< 3 s", ["build"], True)
    measure("build, nothing changed", "< 1 s", ["build"], False, setup=[["build"]])
    measure("validate, nothing changed", "< 1.5 s", ["validate"], False, setup=[["build"]])
    measure("validate --full (every constraint)", "< 1.5 s", ["validate", "--full"], False, old_command=["validate"],
            setup=[["build"]])
    print(f"\neveryday commands: median of {runs} runs of the real kg process; baseline = the code at {rev}")
    print(f"{'command':36} {'now wall/cpu':>16} {'before wall/cpu':>18} {'speed-up':>9}  target")
    for label, new, before, target in rows:
        base = f"{before.wall:6.2f}/{before.cpu:5.2f} s" if before else "n/a (no git)"
        ratio = f"{before.wall / new.wall:8.1f}x" if before else ""
        print(f"{label:36} {new.wall:6.2f}/{new.cpu:5.2f} s  {base:>18} {ratio:>9}  {target}")


def validate_at_scale(kg_store: Path, load: Timed) -> None:
    """``kg validate`` after the bulk load, against the load's time and a reader's memory."""
    validate = run_kg(["--store", str(kg_store), "validate", "-f", "json"], check=False)
    again = run_kg(["--store", str(kg_store), "validate", "-f", "json"], check=False)
    reader = run_kg(["--store", str(kg_store), "stats", "-f", "json"])
    violations = len(json.loads(validate.out)) if validate.out.strip().startswith("[") else "?"
    print(f"\nvalidation at this size ({violations} violations in the synthetic corpus):")
    print(f"  kg validate after the import   {validate.wall:7.1f} s wall, {validate.cpu:6.1f} s cpu, "
          f"{validate.rss_mb:6.0f} MB peak")
    print(f"  kg import rdf (the bulk load)  {load.wall:7.1f} s wall, {load.cpu:6.1f} s cpu, "
          f"{load.rss_mb:6.0f} MB peak")
    print(f"  ratio validate / load          {validate.wall / load.wall:7.2f}x wall, "
          f"{validate.cpu / load.cpu:6.2f}x cpu   target <= 0.50x")
    print(f"  memory: validate {validate.rss_mb:.0f} MB vs kg stats (a reader) {reader.rss_mb:.0f} MB")
    print(f"  kg validate again, nothing changed: {again.wall:.2f} s wall, {again.cpu:.2f} s cpu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rdflib-cap", type=float, default=360.0, help="seconds allowed per rdflib step")
    parser.add_argument("--skip-rdflib", action="store_true")
    parser.add_argument("--everyday-only", action="store_true", help="only the everyday commands")
    parser.add_argument("--everyday-runs", type=int, default=3, help="runs per everyday command (median)")
    parser.add_argument("--baseline-rev", default=BASELINE_REV, help="the code the everyday commands are timed against")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-bench-everyday-") as tmp:
        everyday(Path(tmp), args.baseline_rev, args.everyday_runs)
    if args.everyday_only:
        return

    import pyoxigraph as ox

    import queries
    from kg.answer import run
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
        load = run_kg(["--store", str(kg_store), "import", "rdf", str(corpus.path), "--graph", "bench", "--no-link",
                       "--json"])
        kg_seconds = load.wall
        loaded = json.loads(load.out[load.out.index("{"):])["triples"]
        validate_at_scale(kg_store, load)
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
        named_queue = _time(lambda: run(store, "reading-queue-lineage", {"technique": ROOT_TECHNIQUE}),
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
