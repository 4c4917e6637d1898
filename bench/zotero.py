"""Zotero sync benchmark: ``python -m bench.zotero [--sizes 1000,10000] [--changed 10]``.

For each library size it measures, side by side in one run, against the Zotero API
emulator on loopback (real HTTP, the real pyzotero client):

- **first full sync** of a library into an empty graph: requests and seconds, against the
  baseline of downloading the same library with plain pyzotero (``everything(items())``)
  and doing nothing with it;
- **incremental sync** with ``--changed`` items changed in Zotero since the last sync:
  requests and seconds (median of ``--rounds``), against the baseline of re-reading the
  whole library, which is what a client without a version watermark must do;
- **first push** of a graph reading list of the same size into an empty library:
  requests and seconds.

The figures to look at: the incremental sync's requests (target ≤ 5) and its time at
1k against 10k items (a ratio near 1 means it does not grow with the library).
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from pyoxigraph import Triple

from ingest.emulators.zotero import Library, ZoteroEmulator
from ingest.http import RetryPolicy
from ingest.zotero import LibrarySpec, connect
from ingest.zotero_sync import sync
from kg.graphs import CATALOG, READING
from kg.iris import status_iri
from kg.store.embedded import OxigraphStore
from kg.vocab import BIBO, DCTERMS, ID, RDF, TKG, datetime_literal, text

KEY = "BENCH-KEY-0123456789abcdef"
STATUSES = ("To Read", "In Progress", "Read", "Not Reading", "Skimmed twice")
FAST = RetryPolicy(attempts=4, base=0.05)
T = TypeVar("T")


@dataclass
class Step:
    """One measured step: the requests the emulator saw and the seconds it took."""

    requests: int = 0
    seconds: float = 0.0


@dataclass
class Figures:
    """The steps of one library size: the first sync, a plain download of the library, an
    incremental sync (median of the rounds), reading the library again, and a push."""

    size: int
    first: Step = field(default_factory=Step)
    download: Step = field(default_factory=Step)
    incremental: Step = field(default_factory=Step)
    reread: Step = field(default_factory=Step)
    push: Step = field(default_factory=Step)


def measured(emulator: ZoteroEmulator, call: Callable[[], T]) -> tuple[T, Step]:
    """What ``call`` returned, and the seconds it took with the requests the emulator saw meanwhile."""
    emulator.requests.clear()
    started = time.perf_counter()
    result = call()
    return result, Step(len(emulator.requests), time.perf_counter() - started)


def fill(library: Library, size: int) -> list[str]:
    """``size`` journal articles, as a plugin user would have them, in 12 collections."""
    collections = [library.create_collection(f"Reading category {i}") for i in range(12)]
    keys: list[str] = []
    for start in range(0, size, 50):
        keys += library.create_items([{
            "itemType": "journalArticle", "title": f"Synthetic paper {i}", "DOI": f"10.5555/techkg-bench-{i}",
            "creators": [{"creatorType": "author", "firstName": "Ada", "lastName": f"Author{i % 997}"}],
            "date": str(2016 + i % 10), "collections": [collections[i % 12]],
            "tags": [{"tag": f"topic-{i % 40}"}],
            "extra": f"Read_Status: {STATUSES[i % len(STATUSES)]}\nRead_Status_Date: 2026-01-01T00:00:00.000Z",
        } for i in range(start, min(size, start + 50))])
    return keys


def reading_list(store: OxigraphStore, size: int) -> None:
    """``size`` papers on the graph's reading list (titles in the catalog graph, statuses in
    the reading graph), written in one transaction."""
    at = datetime_literal(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    with store.transaction("bench reading list") as tx:
        papers, statuses = [], []
        for i in range(size):
            paper = ID[f"paper/bench-{i}"]
            papers += [Triple(paper, RDF.type, BIBO.Document),
                       Triple(paper, DCTERMS.title, text(f"Bench paper {i}", None))]
            statuses += [Triple(paper, TKG.readingStatus, status_iri(("to-read", "read", "reading")[i % 3])),
                         Triple(paper, TKG.statusChangedAt, at)]
        tx.insert(CATALOG, papers)
        tx.insert(READING, statuses)


def measure(size: int, changed: int, rounds: int) -> Figures:
    figures = Figures(size)
    with ZoteroEmulator(seed=size) as emulator:
        library = emulator.add_library("user", 1)
        emulator.add_key(KEY, user_id=1)
        keys = fill(library, size)
        api = connect(LibrarySpec("user", 1), key=KEY, api_url=emulator.url, retry=FAST)
        store = OxigraphStore(None)

        first, figures.first = measured(emulator, lambda: sync(store, api))
        assert first.counts()["graph_created"] == size, first.counts()

        from pyzotero import zotero

        plain = zotero.Zotero(1, "user", KEY)
        plain.endpoint = emulator.url
        everything, figures.download = measured(
            emulator, lambda: plain.everything(plain.items(limit=100)))
        assert len(everything) == size

        rounds_: list[Step] = []
        for round_ in range(rounds + 1):
            for i in range(round_ * changed, (round_ + 1) * changed):
                # another status than the one fill() gave item i
                library.update_item(keys[i], extra=f"Read_Status: {STATUSES[(i + 1) % len(STATUSES)]}")
            report, step = measured(emulator, lambda: sync(store, api))
            assert report.counts()["graph_updated"] == changed, report.counts()
            if round_:  # the first round warms up
                rounds_.append(step)
        figures.incremental = Step(max(r.requests for r in rounds_),
                                            statistics.median(r.seconds for r in rounds_))

        again, figures.reread = measured(
            emulator, lambda: plain.everything(plain.items(limit=100)))
        assert len(again) == size
        api.close()
        store.close()

        empty = emulator.add_library("user", 2)
        push_store = OxigraphStore(None)
        reading_list(push_store, size)
        push_api = connect(LibrarySpec("user", 2), key=KEY, api_url=emulator.url, retry=FAST)
        pushed, figures.push = measured(emulator, lambda: sync(push_store, push_api))
        assert pushed.counts()["zotero_created"] == size and len(empty.top_items()) == size
        push_api.close()
        push_store.close()
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1000,10000", help="library sizes, comma-separated")
    parser.add_argument("--changed", type=int, default=10, help="items changed in Zotero before each incremental sync")
    parser.add_argument("--rounds", type=int, default=9, help="incremental syncs to take the median of")
    args = parser.parse_args(argv)
    results = [measure(int(s), args.changed, args.rounds) for s in args.sizes.split(",")]
    print(f"Zotero sync against the emulator on loopback ({args.changed} items changed per incremental sync, "
          f"median of {args.rounds})\n")
    print(f"{'items':>7} | {'first sync':>20} | {'plain download':>20} | {'incremental':>18} | "
          f"{'full re-read':>18} | {'ratio':>7} | {'first push':>20}")
    for f in results:
        print(f"{f.size:>7} | {f.first.requests:>5} req {f.first.seconds:>8.2f} s | "
              f"{f.download.requests:>5} req {f.download.seconds:>8.2f} s | "
              f"{f.incremental.requests:>3} req {f.incremental.seconds:>8.3f} s | "
              f"{f.reread.requests:>4} req {f.reread.seconds:>7.3f} s | "
              f"{f.reread.seconds / f.incremental.seconds:>6.1f}x | "
              f"{f.push.requests:>5} req {f.push.seconds:>8.2f} s")
    if len(results) > 1:
        small, large = results[0], results[-1]
        print(f"\nincremental sync time, {large.size} vs {small.size} items: "
              f"{large.incremental.seconds / small.incremental.seconds:.2f}x "
              f"(library {large.size / small.size:.0f}x larger); full re-read: "
              f"{large.reread.seconds / small.reread.seconds:.1f}x")
        print(f"first sync of {large.size} items: {large.first.requests} requests, {large.first.seconds:.1f} s "
              f"({large.first.seconds / large.download.seconds:.1f}x a plain download of the library)")
    target = all(f.incremental.requests <= 5 for f in results)
    print(f"target: at most 5 requests for an incremental sync: {'met' if target else 'MISSED'}")


if __name__ == "__main__":
    main()
