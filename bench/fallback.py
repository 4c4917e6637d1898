"""The fallback section of the scale benchmark (issue #32): every named query answered by
SPARQL on the store, as it is when the DuckDB tables are stale or absent.

    python -m bench scale --papers 100000 --fallback        # in the full run, after its queries
    python -m bench scale --only queries --store DIR --fallback

A write keeps fresh tables fresh (kg.derived), so the section asks with ``kg query --sparql``,
the path a query takes when the tables are stale or absent (the store is opened read-only),
and each answer is checked to come from SPARQL. Each SELECT named query runs twice as the real ``kg``
process of this tree: ``--limit 100`` (the first page; the whole answer for a query without
a page key) and whole, as JSON Lines read from a pipe. Both are printed beside start-up
(``kg --help``) measured in the same run, with the goal of the first page (start-up + 1 s)
and each process's peak RSS.

Then the first page again from ``oxigraph serve-read-only`` on the same store, on a free
loopback port, where the ``oxigraph`` server is installed beside this Python (the dev
extras): the store is the server's URL, and the goal is start-up + 2 s.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FIRST = 100

#: Parameters for the named queries that need some (the bench corpus's own techniques and
#: papers, and the catalog's).
PARAMS: dict[str, dict[str, str]] = {
    "ancestors": {"technique": "KDA"},
    "bibliography-entry": {"paper": "https://arxiv.org/abs/2412.06464"},
    "citations-of": {"paper": "http://bench.techkg.invalid/paper/99"},
    "cited-by-technique": {"technique": "ZeRO"},
    "compare-techniques": {"technique": "ZeRO,GDN"},
    "descendants": {"technique": "Transformer"},
    "fact-provenance": {"subject": "https://w3id.org/techkg/id/technique/zero"},
    "kernel-runs": {},
    "lineage-subgraph": {"technique": "ZeRO"},
    "new-since": {"since": "2026-01-01"},
    "paper-techniques": {"paper": "http://bench.techkg.invalid/paper/10214"},
    "papers-by-author": {"author": "Author 17"},
    "reading-queue-lineage": {"technique": "ZeRO"},
    "reading-queue-technique": {"technique": "ZeRO"},
    "technique-dimensions": {"technique": "ZeRO"},
    "technique-papers": {"technique": "ZeRO"},
    "technique": {"technique": "ZeRO"},
}
ROW = "{:34} {:>9} {:>11} {:>9} {:>8} {:>8} {:>10} {:>7}  {}"


def named_selects() -> list[str]:
    """The SELECT named queries, by name."""
    import queries

    return [q.name for q in queries.all_queries() if q.kind == "select"]


def section(store: Path, startup: float, *, cap: float, kg: Callable[..., Any],
            names: set[str] | None = None) -> None:
    """Print the fallback rows for ``store`` (see the module's text). ``kg`` runs one kg process
    (bench.scale.kg, of the running module, so that its peaks are counted there)."""

    goal, served_goal = startup + 1.0, startup + 2.0
    print(f"\nfallback: every named query answered by SPARQL on the store "
          f"(kg query --sparql); "
          f"goal: first {FIRST} rows ≤ start-up + 1 s = {goal:.2f} s, "
          f"on oxigraph serve ≤ start-up + 2 s = {served_goal:.2f} s", flush=True)
    print(ROW.format("named query", "rows", f"first {FIRST}", "ratio", "whole", "RSS MB", "serve", "ratio",
                     "answered by"), flush=True)
    force = ["--sparql"]
    worst: tuple[float, str] = (0.0, "")
    worst_served: tuple[float, str] = (0.0, "")
    peak = 0.0
    misses: list[str] = []

    def seconds(done: Any) -> str:
        return f"> {cap:.0f} s" if done.seconds is None else f"{done.seconds:.2f} s"

    with oxigraph_serve(store) as url:
        for name in named_selects():
            if names is not None and name not in names:
                continue
            flags = [x for k, v in PARAMS.get(name, {}).items() for x in ("-p", f"{k}={v}")]
            args = ["query", name, *flags, *force, "-f", "jsonl"]
            page = kg(f"fallback {name} --limit {FIRST}", store, *args, "--limit", str(FIRST), cap=cap, check=False)
            whole = kg(f"fallback {name}", store, *args, cap=cap, check=False)
            if page.code != 0 and page.seconds is not None:
                print(f"  {name}: failed ({page.code}): {page.err.strip().splitlines()[-1:]}", flush=True)
                continue
            served = None if url is None else kg(f"fallback {name} --limit {FIRST} on oxigraph serve", url, *args,
                                                 "--limit", str(FIRST), cap=cap, check=False)
            if served is not None and served.code != 0 and served.seconds is not None:
                print(f"  {name} on oxigraph serve: failed ({served.code}): "
                      f"{served.err.strip().splitlines()[-1:]}", flush=True)
                served = None
            source = _source(page.err)
            if source == "DuckDB":
                misses.append(name)
            rss = max(page.rss_mb, whole.rss_mb)
            peak = max(peak, rss)
            print(ROW.format(name, f"{whole.lines:,}" if whole.seconds is not None else "?", seconds(page),
                             _ratio(page.seconds, goal), seconds(whole), f"{rss:,.0f}",
                             "" if served is None else seconds(served),
                             "" if served is None else _ratio(served.seconds, served_goal), source), flush=True)
            worst = max(worst, (_slowest(page.seconds), name))
            if served is not None:
                worst_served = max(worst_served, (_slowest(served.seconds), name))
    print(f"fallback: slowest first page {worst[1]} {worst[0]:.2f} s = {worst[0] / goal:.2f}x start-up + 1 s; "
          f"peak RSS {peak:,.0f} MB", flush=True)
    if url is None:
        print("  oxigraph serve: not installed beside this Python (pip install -e '.[dev]'): not measured",
              flush=True)
    else:
        print(f"fallback on oxigraph serve: slowest first page {worst_served[1]} {worst_served[0]:.2f} s = "
              f"{worst_served[0] / served_goal:.2f}x start-up + 2 s", flush=True)
    if misses:
        print(f"  note: answered from the tables, not by SPARQL: {', '.join(misses)}", flush=True)


def _ratio(seconds: float | None, goal: float) -> str:
    return "" if seconds is None else f"{seconds / goal:.2f}x"


def _slowest(seconds: float | None) -> float:
    return float("inf") if seconds is None else seconds


@contextmanager
def oxigraph_serve(store: Path) -> Iterator[str | None]:
    """``oxigraph serve-read-only`` on ``store`` (its default graph the union of its graphs),
    on a free port of 127.0.0.1: the store spec of its query URL, or None where the server
    is not installed beside this Python. Stopped on exit."""
    import httpx

    binary = Path(sys.executable).with_name("oxigraph")
    if not binary.exists():
        yield None
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([str(binary), "serve-read-only", "--location", str(store),
                                "--bind", f"127.0.0.1:{port}", "--union-default-graph"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/query"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"oxigraph serve-read-only did not start on {store}")
            try:
                httpx.get(url, params={"query": "ASK {}"}, timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _source(err: str) -> str:
    """Who answered, from ``kg query``'s note on stderr."""
    if "answered by SPARQL" in err:
        return "SPARQL (stale)" if "stale" in err else "SPARQL"
    if "DuckDB" in err or "analytics tables" in err:
        return "DuckDB"
    return "SPARQL"


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.fallback --store DIR``: this section alone, run by the scale
    benchmark (``python -m bench scale --only fallback --store DIR``), which measures start-up."""
    import argparse
    import runpy
    import sys

    parser = argparse.ArgumentParser(prog="python -m bench.fallback", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", required=True, help="an embedded store (built, a corpus imported)")
    args, rest = parser.parse_known_args(argv)
    sys.argv = ["python -m bench scale", "--only", "fallback", "--store", args.store, *rest]
    runpy.run_module("bench.scale", run_name="__main__")  # not imported: bench.scale imports this module


if __name__ == "__main__":
    main()
