"""Search benchmark (issue #33): the full-text index of ``kg search`` on the synthetic corpus,
each figure beside a baseline measured in the same run.

    python -m bench search                    # 100k papers with abstracts (about 1.4M triples)
    python -m bench search --papers 700000    # arXiv-cs size
    python -m bench.search --papers 5000      # a smoke run

The corpus (``bench/corpus.py`` with synthetic abstracts) is imported by the real ``kg import
rdf`` on top of ``kg build`` (no index there yet, so the import keeps none current): that
import, end to end, is the baseline of the index build, which must take at most 0.3 of it.
Then, in this process: the index made from the store (:func:`kg.search.rebuild_index`),
searches of every kind (words, a phrase, a prefix, filters), each run several times, the
median of their medians against 50 ms (and the same searches with the five facets the
search page shows counted over every hit, beside them); ``kg search`` as a process, end to end, against ``kg --help``
plus 0.2 s; and last 1,000 new papers written into the ``arxiv`` graph, then the index
kept current (:func:`kg.search.update_index`, as ``kg ingest arxiv`` calls it) against 2 s,
and the same change found by following the changed graph instead (what a write that does
not say what it changed costs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import generate

ROOT = Path(__file__).resolve().parent.parent
KG = Path(sys.executable).with_name("kg")
ROW = "{:46} {:>12} {:>24} {:>8} {:>6}"
#: (words, filters, what it is)
QUERIES: list[tuple[str, dict[str, object], str]] = [
    ("attention", {}, "one common word"),
    ("chunkwise decay", {}, "two words"),
    ("fp8 collective overlap", {}, "three rarer words"),
    ('"sparse attention"', {}, "a phrase"),
    ("quant*", {}, "a prefix"),
    ("expert routing", {"year": "2023-2025"}, "words and a range of years"),
    ("gradient", {"status": "read"}, "a word and a status"),
    ("pipeline", {"category": "moe"}, "a word and a category"),
    ("kernel", {"technique": "synthetic-7"}, "a word and a technique"),
    ("", {"mine": True, "year": "2024"}, "filters alone (yours, 2024)"),
    ("delta rule", {}, "a catalog title"),
    ("study 4242", {}, "a number in an abstract"),
]


def _kg(*args: str, store: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "KG_STORE": str(store), "COLUMNS": "120"}
    start = time.perf_counter()
    proc = subprocess.run([str(KG), *args], capture_output=True, text=True, env=env, timeout=7200)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"kg {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return seconds, proc


def _row(what: str, value: str, baseline: str, ratio: str, ok: bool | None) -> None:
    print(ROW.format(what, value, baseline, ratio, "" if ok is None else ("ok" if ok else "SLOW")), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7, help="times each search is run (its median counts)")
    parser.add_argument("--new", type=int, default=1000, help="papers written before the incremental update")
    parser.add_argument("--keep", type=Path, help="leave the store here (a new directory) instead of removing it")
    args = parser.parse_args()

    import pyoxigraph as ox

    from kg.graphs import ARXIV
    from kg.search import index_root, rebuild_index, update_index
    from kg.search.index import open_index
    from kg.search.query import Filters, search
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore
    from kg.vocab import BIBO, DCTERMS, RDF, TKG, text

    failed = False
    with tempfile.TemporaryDirectory(prefix="kg-bench-search-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        store_dir = work / "store"
        start = time.perf_counter()
        corpus = generate(args.papers, out=Path(tmp) / "corpus.nt", abstracts=True)
        print(f"corpus: {corpus.triples:,} triples, {corpus.papers:,} papers with abstracts "
              f"({time.perf_counter() - start:.0f} s to write)", flush=True)
        _kg("build", "--no-validate", store=store_dir)
        shutil.rmtree(index_root(str(store_dir)), ignore_errors=True)  # the import keeps no index current
        imported, _ = _kg("import", "rdf", str(corpus.path), "--graph", "bench", "-f", "json", store=store_dir)
        print(ROW.format("", "TechKG", "baseline", "ratio", ""))

        # The index, made from the store in this process.
        with OxigraphStore.open_reader(store_dir) as reader:
            report = rebuild_index(reader)
        ratio = report.seconds / imported
        failed |= ratio > 0.3
        _row(f"index build ({report.documents:,} documents)", f"{report.seconds:.1f} s",
             f"kg import rdf {imported:.1f} s", f"{ratio:.2f}", ratio <= 0.3)

        # Searches in process.
        opened = open_index(index_root(str(store_dir)))
        assert opened is not None
        index = opened[0]
        medians, faceted = [], []
        for words, filters, what in QUERIES:
            times, with_facets = [], []
            for _ in range(args.runs):
                t = time.perf_counter()
                found = search(index, words, Filters(**filters), limit=20)  # type: ignore[arg-type]
                times.append(time.perf_counter() - t)
                t = time.perf_counter()
                search(index, words, Filters(**filters), limit=20, facets=True)  # type: ignore[arg-type]
                with_facets.append(time.perf_counter() - t)
            medians.append(statistics.median(times))
            faceted.append(statistics.median(with_facets))
            _row(f"  {what} ({found.total:,} hits)", f"{medians[-1] * 1000:.1f} ms",
                 f"with facets {faceted[-1] * 1000:.1f} ms", "", None)
        p50 = statistics.median(medians)
        failed |= p50 > 0.05
        _row("search, in process (p50 of the medians)", f"{p50 * 1000:.1f} ms", "50 ms", f"{p50 / 0.05:.2f}",
             p50 <= 0.05)
        _row("  the same with the five facets counted", f"{statistics.median(faceted) * 1000:.1f} ms", "", "", None)

        # kg search as a process, end to end.
        startup = statistics.median(_kg("--help", store=store_dir)[0] for _ in range(5))
        whole = statistics.median(_kg("search", "sparse attention", "-n", "10", store=store_dir)[0] for _ in range(5))
        limit = startup + 0.2
        failed |= whole > limit
        _row("kg search, end to end", f"{whole:.2f} s", f"kg --help {startup:.2f} s + 0.2", f"{whole / limit:.2f}",
             whole <= limit)

        # 1,000 new papers, then the index kept current.
        base = "http://bench.techkg.invalid/new-paper/"
        papers = [ox.NamedNode(f"{base}{i}") for i in range(args.new)]
        with OxigraphStore(store_dir) as store:
            triples = []
            for i, node in enumerate(papers):
                triples += [ox.Triple(node, RDF.type, BIBO.Document),
                            ox.Triple(node, DCTERMS.title, text(f"Okapi routing for new experts number {i}", None)),
                            ox.Triple(node, DCTERMS.abstract, text(f"A fresh study of okapi gating, case {i}.", None)),
                            ox.Triple(node, DCTERMS.issued, ox.Literal("2026", datatype=ox.NamedNode(
                                "http://www.w3.org/2001/XMLSchema#gYear"))),
                            ox.Triple(node, TKG.arxivId, text(f"2699.{i:05d}", None))]
            t = time.perf_counter()
            with store.transaction(Activity("bench: new papers")) as tx:
                tx.insert(ARXIV, triples)
            written = time.perf_counter() - t
            update = update_index(store, papers=[p.value for p in papers], graphs=[ARXIV])
            failed |= update.seconds > 2.0
            _row(f"update after {args.new:,} new papers", f"{update.seconds:.2f} s", "2 s",
                 f"{update.seconds / 2:.2f}", update.seconds <= 2.0)
            _row("  (writing them to the store)", f"{written:.2f} s", "", "", None)
            opened = open_index(index_root(str(store_dir)))
            assert opened is not None
            found = search(opened[0], "okapi", limit=1)
            assert found.total == args.new, found.total
            # The same change again, found from the graph's signature alone.
            with store.transaction(Activity("bench: the new papers again")) as tx:
                tx.insert(ARXIV, [ox.Triple(p, TKG.venue, text("Okapi'26", None)) for p in papers])
            repair = update_index(store)
            _row(f"  update found from the changed graph ({repair.written:,} docs)", f"{repair.seconds:.2f} s",
                 "", "", None)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
