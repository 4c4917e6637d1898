"""Workbench benchmark (issue #9): each page of the web app on the synthetic corpus loaded
on top of ``kg build``, timed over HTTP side by side with a baseline in the same run.

    python -m bench.web                  # 100k papers ≈ 1.3M triples
    python -m bench web --papers 10000   # quicker
    python -m bench web --papers 700000  # arXiv-cs size (issue #16): every page < 1 s
    python -m bench web --store-from /tmp/s700/store   # a copy of a store made before
                                                       # (and of its analytics file, if fresh)

The app runs as ``kg serve`` builds it (endpoint and workbench) under uvicorn on
127.0.0.1. Baseline for each page: the endpoint's named query that holds the same facts
(``/queries/{name}`` as SPARQL JSON), fetched from the same server, so the ratio is what
turning the graph into a page costs on top of asking for its data. The Lineage page is
timed against the HTML lineage export of the same graph (``exports.html``, in process),
whose rendering it reuses. Then each page again on the first request after a write (a
reading status set: what a page reads of the statuses is read again, the analytics tables
hold the statuses of before), against the same page warm, and on the first request to a
server just started (nothing kept yet). A page that fails (a timeout, an error) is
reported with its status and the run goes on. Then a burst of requests (cards, technique pages, comparisons)
from 10 concurrent clients against the same burst from one client. Last, each page as the
first request to a real ``kg serve`` process of its own: at once, and after the warm-up
the server does as it starts (kg.server.web.warm).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pyoxigraph as ox

from bench.corpus import generate

ROW = "{:44} {:>12} {:>44} {:>8}"
#: (page, what it shows, baseline named query that holds the same facts)
PAGES = [
    ("/", "Techniques (comparison page)", "/queries/lineage-nodes"),
    ("/?all=1", "Techniques, with every lineage parent", "/queries/lineage-nodes"),
    ("/?q=delta&kernel=verified", "Techniques, filtered", "/queries/lineage-nodes"),
    ("/techniques/transformer", "Technique page (Transformer)", "/queries/technique?technique=transformer"),
    ("/techniques/gated-deltanet", "Technique page (Gated DeltaNet)", "/queries/technique?technique=gdn"),
    ("/compare?t=gdn&t=kda&t=mamba2", "Compare, 3 techniques", "/queries/compare-techniques?technique=gdn,kda,mamba2"),
    ("/compare.md?t=gdn&t=kda&t=mamba2", "Compare as Markdown", "/queries/compare-techniques?technique=gdn,kda,mamba2"),
    ("/reading", "Reading list", "/queries/reading-queue"),
    ("/reading?status=read", "Reading list, read papers", "/queries/read-without-note"),
    ("/query", "Query editor", "/queries"),
]

#: (page, what it shows) timed on the first request after a write.
COLD = [
    ("/", "Techniques"),
    ("/techniques/transformer", "Technique page (Transformer)"),
    ("/techniques/synthetic-5", "Technique page (a synthetic one)"),
    ("/compare?t=gdn&t=kda&t=mamba2", "Compare, 3 techniques"),
    ("/compare", "Compare, the pickers alone"),
    ("/compare/choices?q=synth", "Compare picker suggestions (q=synth)"),
    ("/reading", "Reading list"),
    ("/reading?status=read", "Reading list, read papers"),
    ("/lineage", "Lineage (clustered)"),
    ("/lineage?root=transformer", "Lineage around Transformer (bounded)"),
]


@contextmanager
def serving(store: object) -> Iterator[str]:
    """The workbench and endpoint over ``store`` under uvicorn in a thread; yields the base URL."""
    from kg.server import ServerSettings, create_app
    from kg.server.web import workbench_routes
    from tests.servers import serving as serve_app

    app = create_app(store, ServerSettings(max_rows=1_000_000), extra_routes=workbench_routes())  # type: ignore[arg-type]
    with serve_app(app) as base:
        yield base


class Failed(Exception):
    """A page or query that did not answer 200: its status and the first words of why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(f"{status}: {why}")
        self.status = status
        self.why = why


def _get(client: httpx.Client, path: str, accept: str) -> httpx.Response:
    try:
        answer = client.get(path, headers={"Accept": accept})
    except httpx.TimeoutException:
        raise Failed(0, "no answer within the client's timeout") from None
    if answer.status_code != 200:
        try:
            why = str(answer.json().get("error", ""))
        except ValueError:
            found = re.search(r"<p[^>]*>(.*?)</p>", answer.text, re.S)
            why = re.sub(r"<[^>]+>|\s+", " ", found.group(1) if found else answer.text).strip()
        raise Failed(answer.status_code, why[:70])
    return answer


def _verdict(quads: int, when: str, slow: list[str]) -> None:
    """The goal's line: met, or the pages that missed it."""
    verdict = f"missed by {', '.join(slow)}" if slow else "met"
    print(f"\ngoal, every page < 1 s at {quads:,} quads, {when}: {verdict}")


def _median(client: httpx.Client, path: str, runs: int, accept: str = "*/*") -> tuple[float, int]:
    """Median seconds of ``runs`` GETs (after one warm-up) and the size of the answer;
    :class:`Failed` if one does not answer 200."""
    answer = _get(client, path, accept)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        answer = _get(client, path, accept)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), len(answer.content)


async def _burst(base: str, paths: list[str], clients: int) -> tuple[float, list[float], Counter[int]]:
    latencies: list[float] = []
    failures: Counter[int] = Counter()

    async def one(offset: int) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:
            for path in paths[offset::clients]:
                start = time.perf_counter()
                answer = await client.get(path)
                latencies.append(time.perf_counter() - start)
                if answer.status_code != 200:
                    failures[answer.status_code] += 1

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(clients)))
    return time.perf_counter() - start, sorted(latencies), failures


@contextmanager
def _started(store: Path, *, warmed: bool) -> Iterator[tuple[str, float | None]]:
    """``kg serve`` on ``store`` (a free port of 127.0.0.1); yields its base URL once it
    listens and, with ``warmed``, once its warm-up logged that it ended, the seconds since
    it listened (None if it did not within a minute)."""
    import socket
    import subprocess
    import threading

    from tests.servers import KG, free_port

    port = free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([str(KG), "--store", str(store), "serve", "--port", str(port), "--log-level", "info"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    done = threading.Event()

    def watch() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "warmed up" in line:
                done.set()

    threading.Thread(target=watch, daemon=True).start()
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - start > 60:
                    raise Failed(0, "kg serve did not start") from None
                time.sleep(0.02)
        listening = time.perf_counter()
        warm_up = None
        if warmed and done.wait(60):
            warm_up = time.perf_counter() - listening
        yield f"http://127.0.0.1:{port}", warm_up
    finally:
        proc.terminate()
        proc.wait(30)


def processes(store: Path, quads: int, warm_of: dict[str, float]) -> None:
    """Each page as the first request to a ``kg serve`` process of its own: at once, as a
    script would, and once the server logged the end of its warm-up, as a person would
    (a browser opened after the command)."""
    print("\n" + ROW.format("first request to a new kg serve process", "at once", "after its warm-up (warm-up)",
                            "warm"))
    slow: list[str] = []
    for path, what in COLD:
        cells = []
        for warmed in (False, True):
            try:
                with (_started(store, warmed=warmed) as (base, warm_up),
                      httpx.Client(base_url=base, timeout=300) as client):
                    start = time.perf_counter()
                    _get(client, path, "*/*")
                    first = time.perf_counter() - start
                cells.append(f"{first * 1000:,.1f} ms" + (f" ({warm_up:.1f} s)" if warm_up is not None else ""))
                slow += [f"{what} ({'after the warm-up' if warmed else 'at once'})"] if first >= 1.0 else []
            except Failed as failed:
                cells.append(f"failed {failed.status}")
                slow.append(what)
        then = warm_of.get(path)
        print(ROW.format(what[:44], cells[0], cells[1], f"{then * 1000:,.1f} ms" if then else ""), flush=True)
    _verdict(quads, "as the first request to a new kg serve process", slow)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--burst", type=int, default=400, help="requests in the concurrency burst")
    parser.add_argument("--no-analytics", action="store_true",
                        help="leave out kg analytics build (the reading page then asks the store)")
    parser.add_argument("--store-from", type=Path, metavar="DIR",
                        help="work on a copy of this store (e.g. kg build + kg import rdf of "
                        "python -m bench.corpus N) instead of generating one; its analytics file "
                        "(DIR.analytics.duckdb) is copied too when there is one, and built when it is stale")
    args = parser.parse_args()

    from kg.analytics.materialize import database_path
    from kg.build import build
    from kg.graphs import graph_iri
    from kg.reading import set_status
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore

    with tempfile.TemporaryDirectory(prefix="kg-bench-web-") as tmp:
        if args.store_from is not None:
            source = args.store_from.resolve()
            start = time.perf_counter()
            shutil.copytree(source, Path(tmp) / "store", symlinks=True)
            if not args.no_analytics and database_path(str(source)).exists():
                shutil.copy2(database_path(str(source)), database_path(str(Path(tmp) / "store")))
            store = OxigraphStore(Path(tmp) / "store")
            print(f"store: a copy of {source} ({time.perf_counter() - start:.0f} s): {store.count():,} quads")
        else:
            corpus = generate(args.papers, out=Path(tmp) / "corpus.nt")
            store = OxigraphStore(Path(tmp) / "store")
            build(store, validate=False)
            store.load_file(corpus.path, graph=graph_iri("bench"), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                            activity=Activity("bench load"))
            print(f"corpus: {corpus.triples:,} triples ({corpus.papers:,} papers, {corpus.techniques} synthetic "
                  f"techniques) on top of kg build: {store.count():,} quads")
        if not args.no_analytics:
            from kg.analytics import build as analyse
            from kg.analytics.answers import freshness

            con, why = freshness(store, database_path(store.location))
            if con is not None:
                con.close()
                print("kg analytics build: the copied tables are fresh (they answer the analytic queries)")
            else:
                start = time.perf_counter()
                analyse(store, database_path(store.location))
                print(f"kg analytics build: {time.perf_counter() - start:.1f} s ({why}; fresh tables answer "
                      "the analytic queries and the reading page)")
        print()
        with serving(store) as base, httpx.Client(base_url=base, timeout=300) as client:
            start = time.perf_counter()
            try:
                _get(client, "/lineage", "*/*")
                print(f"first /lineage (Graphviz layout of the lineage shown): {time.perf_counter() - start:.2f} s\n")
            except Failed as failed:
                print(f"first /lineage failed after {time.perf_counter() - start:.2f} s ({failed})\n")
            print(ROW.format("page", "workbench", "baseline: named query (SPARQL JSON)", "ratio"))
            slow: list[str] = []
            for path, what, baseline in PAGES:
                try:
                    ours, size = _median(client, path, args.runs)
                    ours_text, label = f"{ours * 1000:,.1f} ms", f"{what} ({size / 1e3:,.0f} kB)"
                except Failed as failed:  # say so, and go on with the other pages
                    ours, ours_text, label = None, f"failed {failed.status}", f"{what}: {failed.why}"
                try:
                    theirs, _ = _median(client, baseline, args.runs, "application/sparql-results+json")
                    base_text = f"{baseline.split('?')[0]} {theirs * 1000:,.1f} ms"
                    ratio = f"{ours / theirs:.2f}x" if ours is not None else ""
                except Failed as failed:  # the baseline ran past the server's timeout: say so, go on
                    base_text, ratio = f"{baseline.split('?')[0]} failed ({failed.status})", ""
                print(ROW.format(label[:44], ours_text, base_text, ratio), flush=True)
                slow += [what] if ours is None or ours >= 1.0 else []

            from exports.html import render_page
            from exports.lineage import LineageOptions, build_lineage

            try:
                ours, size = _median(client, "/lineage", args.runs)
                ours_text, label = f"{ours * 1000:,.1f} ms", f"Lineage, layout cached ({size / 1e3:,.0f} kB)"
            except Failed as failed:
                ours, ours_text, label = None, f"failed {failed.status}", f"Lineage: {failed.why}"
            start = time.perf_counter()
            render_page(build_lineage(store, LineageOptions(include_private=True)))
            theirs = time.perf_counter() - start
            print(ROW.format(label[:44], ours_text, f"HTML lineage export {theirs * 1000:,.1f} ms",
                             f"{ours / theirs:.2f}x" if ours is not None else ""), flush=True)
            slow += ["Lineage"] if ours is None or ours >= 1.0 else []
            quads = store.count()
            _verdict(quads, "warm", slow)

            # Cold: the first request after a write (a reading status set, as the web app or
            # kg reading set does), which every kept page and the analytics tables' freshness
            # depend on; beside it the same page warm, measured just after.
            paper = next(iter(store.select("SELECT ?p WHERE { ?p a bibo:Document } LIMIT 1")))["p"]
            print("\n" + ROW.format("first request after a write" + (" (tables stale)" if not args.no_analytics
                                                                       else ""), "cold", "the same page warm",
                                     "ratio"))
            cold_slow: list[str] = []
            warm_of: dict[str, float] = {}
            for turn, (path, what) in enumerate(COLD):
                set_status(store, paper, ("read", "to-read")[turn % 2], via="bench")  # type: ignore[arg-type]
                try:
                    start = time.perf_counter()
                    _get(client, path, "*/*")
                    cold = time.perf_counter() - start
                    warm, size = _median(client, path, args.runs)
                    warm_of[path] = warm
                    print(ROW.format(f"{what} ({size / 1e3:,.0f} kB)"[:44], f"{cold * 1000:,.1f} ms",
                                     f"{warm * 1000:,.1f} ms", f"{cold / warm:.1f}x"), flush=True)
                    cold_slow += [what] if cold >= 1.0 else []
                except Failed as failed:
                    print(ROW.format(f"{what}: {failed.why}"[:44], f"failed {failed.status}", "", ""), flush=True)
                    cold_slow.append(what)
            _verdict(quads, "cold", cold_slow)

            # Fresh: the first request of each page on a server just started over the same
            # store (nothing kept yet: a user's first visit), beside the page warm (above).
            print("\n" + ROW.format("first request to a fresh server", "fresh", "the same page warm", "ratio"))
            fresh_slow: list[str] = []
            with serving(store) as fresh_base, httpx.Client(base_url=fresh_base, timeout=300) as fresh:
                for path, what in COLD:
                    try:
                        start = time.perf_counter()
                        size = len(_get(fresh, path, "*/*").content)
                        first = time.perf_counter() - start
                        then = warm_of.get(path)
                        print(ROW.format(f"{what} ({size / 1e3:,.0f} kB)"[:44], f"{first * 1000:,.1f} ms",
                                         f"{then * 1000:,.1f} ms" if then else "",
                                         f"{first / then:.1f}x" if then else ""), flush=True)
                        fresh_slow += [what] if first >= 1.0 else []
                    except Failed as failed:
                        print(ROW.format(f"{what}: {failed.why}"[:44], f"failed {failed.status}", "", ""), flush=True)
                        fresh_slow.append(what)
            _verdict(quads, "on a fresh server", fresh_slow)

            # The burst clicks through cards, technique pages and comparisons; the reading
            # list and the lineage grow with the whole corpus and are timed above.
            mix = [p for p, _, _ in PAGES if not p.startswith(("/reading", "/?all"))]
            paths = [mix[i % len(mix)] for i in range(args.burst)]
            one_s, _, failed_one = asyncio.run(_burst(base, paths, 1))
            ten_s, latencies, failed_ten = asyncio.run(_burst(base, paths, 10))
            p95 = latencies[int(0.95 * len(latencies)) - 1]
            print(f"\n{args.burst} requests: 10 clients {ten_s:.1f} s ({args.burst / ten_s:.0f} req/s, "
                  f"p50 {statistics.median(latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms) vs 1 client "
                  f"{one_s:.1f} s ({args.burst / one_s:.0f} req/s): {one_s / ten_s:.2f}x the throughput")
            for clients, failures in ((1, failed_one), (10, failed_ten)):
                if failures:
                    print(f"  {clients} client(s): {sum(failures.values())} requests failed "
                          f"({', '.join(f'{n}× {status}' for status, n in sorted(failures.items()))})")
        store.close()
        processes(Path(tmp) / "store", quads, warm_of)


if __name__ == "__main__":
    main()
