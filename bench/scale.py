"""Scale benchmark (issue #16): every figure of the arXiv-cs table on the synthetic corpus,
each beside its baseline measured in the same run, and the peak memory of every process.

    python -m bench scale                     # 700k papers ≈ 9.1M triples (about 15 min on 2 cores)
    python -m bench scale --papers 100000     # 1.3M triples, a few minutes
    python -m bench.scale --papers 5000       # a smoke run

Everything TechKG does is the real ``kg`` process of this tree, timed end to end (start-up
included); the baselines are pyoxigraph's own ``Store.bulk_load(path=...)`` for loads, the
raw pyoxigraph query of the same named query's text (parameters inlined, the union of the
graphs as the default graph, every solution read) for queries, and ``kg --help`` for
start-up. Each raw query runs in its own process and its seconds leave out opening the
store. Peak RSS is each process's own (VmHWM, printed by the process as it exits).

The steps, in order: ``kg build`` (and a copy of that small store); ``kg import rdf
--no-link`` of the corpus on top of the build, with pyoxigraph's bulk load of it before and
after (the baseline is the mean of the two), and ``kg link``
of every paper (against the import: ≤ 0.3x); ``kg validate`` (twice: after the import, and
with nothing changed); ``kg analytics build`` (full, then after one reading status changed);
``kg query ancestors`` on the small and the big store in turn, five times each; the named
queries (whole result as JSON Lines, the time to its first 100 rows; ``--limit 100`` for the
two whose goal is the first page); after a write (an import of 1,000 new papers, as an arXiv
ingest brings them, and again with the techniques and authors they name drawn anew, ``kg
reading set`` and ``kg suggest accept`` of an edge that a planted citation proposes,
:mod:`bench.planted`, each keeping the fresh tables fresh, then ``kg query reading-queue
--limit 100``, ``kg reading list`` and ``kg show``, each against start-up; ``--only writes
--store DIR`` runs this alone); last, a graph
of about a million triples loaded, then replaced by another (disjoint but for the shared
vocabulary, about 77% of the triples differ), replaced back at once, then refreshed (5% of
its papers changed, 2% added), and refreshed twice more with the papers it changed linked,
as ``kg import rdf`` does by default. The first load and the first replacement each start from a
settled store: RocksDB compacts what a load wrote in the next process that opens the store
for writing (see :data:`SETTLE`), and that compaction is shown on rows of its own; the
replacement back shows what inheriting it costs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import fallback
from bench.corpus import BASE, FOAF, RDF, generate, refresh

ROOT = Path(__file__).resolve().parent.parent
FIRST = 100
#: (named query, parameters, goal, whether the goal is the first page)
QUERIES: list[tuple[str, dict[str, str], str, bool]] = [
    ("bibliography", {}, "first 100 rows ≤ start-up + 1 s", True),
    ("lineage-papers", {}, "first 100 rows ≤ start-up + 1 s", True),
    ("new-since", {"since": "2026-01-01"}, "streamed", False),
    ("reading-queue", {}, "streamed", False),
    ("lineage-paper-links", {}, "streamed", False),
    ("reading-queue-lineage", {"technique": "ZeRO"}, "≤ start-up + 1 s", False),
    ("read-without-note", {}, "≤ start-up + 1 s", False),
    ("repositories", {}, "≤ start-up + 1 s", False),
    ("lineage-nodes", {}, "≤ start-up + 1 s", False),
]
ROW = "{:40} {:>22} {:>30} {:>8} {:>8}  {}"

#: Prepended to every Python child: its own peak resident memory (VmHWM) on stderr at exit.
#: ru_maxrss is not used for it, as it counts the parent's memory at a vfork.
PEAK = r"""
import atexit as _atexit, re as _re, sys as _sys
def _peak():
    status = open("/proc/self/status").read()
    _sys.stderr.write("PEAK_KB %s\n" % _re.search(r"VmHWM:\s+(\d+)", status).group(1))
_atexit.register(_peak)
"""
KG_MAIN = PEAK + "import sys\nfrom kg.cli import main\nsys.argv[0] = 'kg'\nmain()\n"

RAW_QUERY = r"""
import json, sys, time
import pyoxigraph as ox
store = ox.Store.read_only(sys.argv[1])
text = open(sys.argv[2], encoding="utf-8").read()
start = time.perf_counter()
rows = sum(1 for _ in store.query(text, use_default_graph_as_union=True))
print(json.dumps({"seconds": time.perf_counter() - start, "rows": rows}), flush=True)
"""

#: Opens a store for writing and waits until RocksDB's background threads (compaction,
#: flushes) have been idle for 3 s: the compaction that earlier loads left to the next writer.
SETTLE = r"""
import json, os, sys, time
from pathlib import Path
from kg.store.embedded import OxigraphStore

def background_cpu():
    total = 0
    for task in os.listdir("/proc/self/task"):
        try:
            stat = open(f"/proc/self/task/{task}/stat").read()
        except OSError:
            continue
        if stat[stat.index("(") + 1:].startswith("rocksdb"):
            fields = stat[stat.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")

start = time.perf_counter()
store = OxigraphStore(Path(sys.argv[1]))
last, idle = 0.0, 0
while idle < 3:
    time.sleep(1)
    now = background_cpu()
    idle, last = (idle + 1 if now - last < 0.05 else 0), now
store.close()
print(json.dumps({"seconds": time.perf_counter() - start - idle, "cpu": last}), flush=True)
"""

RAW_LOAD = r"""
import json, sys, time
import pyoxigraph as ox
start = time.perf_counter()
store = ox.Store(sys.argv[1])
store.bulk_load(path=sys.argv[2], format=ox.RdfFormat.N_TRIPLES, to_graph=ox.NamedNode("urn:bench"))
store.flush()
print(json.dumps({"seconds": time.perf_counter() - start}), flush=True)
"""


@dataclass
class Run:
    """One process: wall seconds (None when it outlived its cap), seconds to its first
    :data:`FIRST` lines of output, lines written, peak RSS in MB, exit status, output (when
    kept), stderr."""

    seconds: float | None
    first: float | None
    lines: int
    rss_mb: float
    code: int
    out: str
    err: str
    #: A few lines of output that are not JSON objects (for JSON Lines: not rows).
    odd: list[str]


PEAKS: dict[str, float] = {}


def run(what: str, argv: list[str], *, cap: float, keep: bool = False) -> Run:
    """Run ``argv``, reading its output line by line as it comes (a pipe, as a user's
    ``| head`` would); kill it after ``cap`` seconds. Records its peak RSS under ``what``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    # As an installed kg runs: its modules compiled once and read back, not compiled in every
    # process (a sandbox that forbids writing them would add ~0.1 s to each command).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        proc.kill()

    timer = threading.Timer(cap, kill)
    timer.start()
    err: list[bytes] = []
    assert proc.stdout is not None and proc.stderr is not None
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    lines, first = 0, None
    kept: list[bytes] = []
    odd: list[str] = []
    for line in proc.stdout:
        lines += 1
        if lines == FIRST:
            first = time.perf_counter() - start
        if keep:
            kept.append(line)
        elif not line.startswith(b"{") and len(odd) < 5:  # JSON Lines: every row is an object
            odd.append(line.decode("utf-8", "replace"))
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    timer.cancel()
    reader.join()
    errors = b"".join(err).decode("utf-8", "replace")
    peak = re.findall(r"PEAK_KB (\d+)", errors)
    rss = int(peak[-1]) / 1024 if peak else usage.ru_maxrss / 1024
    PEAKS[what] = max(PEAKS.get(what, 0.0), rss)
    text = b"".join(kept).decode("utf-8", "replace")
    return Run(None if killed.is_set() else wall, first, lines, rss, proc.returncode, text, errors, odd)


def kg(what: str, store: Path | str, *args: str, cap: float, keep: bool = False, check: bool = True) -> Run:
    """The real ``kg`` of this tree (``python -c`` puts the working directory first on sys.path)
    on ``store``: a folder, or a remote store's spec."""
    done = run(what, [sys.executable, "-c", KG_MAIN, "--store", str(store), *args], cap=cap, keep=keep)
    if check and done.seconds is not None and done.code != 0:
        raise RuntimeError(f"kg {' '.join(args)} failed ({done.code}):\n{done.err[-2000:]}")
    return done


def child(what: str, code: str, *args: str, cap: float) -> tuple[dict[str, Any], Run]:
    """A Python baseline in its own process; its JSON line and the run."""
    done = run(what, [sys.executable, "-c", PEAK + code, *args], cap=cap, keep=True)
    if done.seconds is None:
        return {}, done
    if done.code != 0:
        raise RuntimeError(f"{what} failed ({done.code}):\n{done.err[-2000:]}")
    return json.loads(done.out.strip().splitlines()[-1]), done


def _s(seconds: float | None, cap: float) -> str:
    return f"> {cap:.0f} s (cut off)" if seconds is None else f"{seconds:.2f} s"


def _ratio(ours: float | None, theirs: float | None) -> str:
    return "" if ours is None or not theirs else f"{ours / theirs:.2f}x"


def settle_row(row: Callable[..., None], store: Path, after: str, *, cap: float) -> None:
    """Let RocksDB finish the compaction that the loads before left pending (:data:`SETTLE`)."""
    settled, done = child(f"settle after {after}", SETTLE, str(store), cap=cap)
    row(f"compaction left by {after}", _s(settled.get("seconds"), cap),
        f"{settled.get('cpu', 0):.1f} CPU-s in RocksDB", "", done.rss_mb, "(settled before the next load)")


def compaction_row(row: Callable[..., None], store: Path, *, cap: float) -> None:
    """Wait for the compaction that the import left due (kg.store.compaction), which the
    writer after it starts in the background as it closes: the rows after it are then
    measured on a compacted store, without it taking their cores."""
    from kg.store.compaction import due, state
    from kg.store.folder import HOLDER_FILE

    before, start = state(store).get("compacted"), time.perf_counter()
    while time.perf_counter() - start < cap and ((store / HOLDER_FILE).exists() or due(store)):
        time.sleep(0.2)
    waited, now = time.perf_counter() - start, state(store)
    if now.get("compacted") == before:
        print(f"compaction: none ({now.get('written', 0):,} triples written since the last)", flush=True)
        return
    row("compaction in the background (waited for)", _s(waited, cap), f"compacting alone {now.get('seconds')} s",
        "", float(now.get("peak_mb", 0.0)), "(after the import)")


def _changed(done: Run) -> str:
    """What a replacement added and removed, from ``kg import rdf -f json``."""
    try:
        report = json.loads(done.out)
    except ValueError:
        return ""
    def count(n: int) -> str:
        return f"{n:,}" if n < 10_000 else f"{n / 1e3:,.0f}k"

    return f" (+{count(report['added'])} -{count(report['removed'])})"


def _median_run(runs: list[Run]) -> Run:
    return sorted(runs, key=lambda r: r.seconds or float("inf"))[len(runs) // 2]


def query_text(store_path: Path, name: str, params: dict[str, str]) -> str:
    """The named query's own SPARQL with its parameters resolved and inlined, prefixes declared."""
    import queries
    from kg.resolve import Resolver
    from kg.sparqltext import inject_values
    from kg.store.base import prefix_block
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(store_path)
    try:
        named = queries.get(name)
        text, bindings = queries.prepare(named, params, Resolver(store))
    finally:
        store.close()
    full = inject_values(text, bindings) if bindings else text
    return prefix_block(full) + full


def query_rows(big: Path, work: Path, startup: float, *, cap: float, raw_cap: float, formats: list[str],
               names: set[str] | None = None) -> None:
    """The named queries' rows: each whole result (and its first page) beside the raw query."""

    def row(what: str, ours: str, baseline: str, ratio: str, rss: float, goal: str) -> None:
        print(ROW.format(what, ours, baseline, ratio, f"{rss:,.0f}", goal), flush=True)

    for name, params, goal, first_page in QUERIES:
        if names is not None and name not in names:
            continue
        text_path = work / f"{name}.rq"
        text_path.write_text(query_text(big, name, params), encoding="utf-8")
        raw, _ = child(f"raw query {name}", RAW_QUERY, str(big), str(text_path), cap=raw_cap)
        base = f"pyoxigraph {_s(raw.get('seconds'), raw_cap)}"
        flags = [x for k, v in params.items() for x in ("-p", f"{k}={v}")]
        whole = kg(f"kg query {name}", big, "query", name, *flags, "-f", "jsonl", cap=cap)
        source = "duckdb" if "DuckDB" in whole.err else "sparql"
        label = f"{name} ({whole.lines:,} rows, {source})"
        if goal.startswith("≤"):
            goal += f" ({_ratio(whole.seconds, startup + 1)})"
        row(label, _s(whole.seconds, cap), base, _ratio(whole.seconds, raw.get("seconds")), whole.rss_mb,
            goal if not first_page else "streamed, memory flat")
        if raw and raw.get("rows") != whole.lines:
            print(f"  note: the raw query gave {raw['rows']:,} rows; kg's lines that are not rows: "
                  f"{whole.odd[:2]!r}", flush=True)
        if goal.startswith("≤"):
            for fmt in formats:
                if fmt == "jsonl":
                    continue
                other = kg(f"kg query {name} -f {fmt}", big, "query", name, *flags, "-f", fmt, cap=cap)
                row(f"  {name} -f {fmt}", _s(other.seconds, cap), f"start-up + 1 s {startup + 1:.2f} s",
                    _ratio(other.seconds, startup + 1), other.rss_mb, "≤ 1.00x")
        if first_page:
            page = kg(f"kg query {name}", big, "query", name, *flags, "-f", "jsonl", "--limit", str(FIRST),
                      cap=cap)
            row(f"  {name} --limit {FIRST}", _s(page.seconds, cap), f"start-up + 1 s {startup + 1:.2f} s",
                _ratio(page.seconds, startup + 1), page.rss_mb, "≤ 1.00x")
        elif whole.first is not None:
            row(f"  first {FIRST} rows of it", _s(whole.first, cap), f"start-up + 1 s {startup + 1:.2f} s",
                _ratio(whole.first, startup + 1), whole.rss_mb, "")


#: Each write of the "after a write" section, its goal, and what is timed after it.
AFTER_WRITES: list[tuple[str, list[str], float]] = [
    ("kg reading set (patch included)", ["reading", "set", "GPipe", "read"], 0.5),
    ("kg reading set again", ["reading", "set", "GPipe", "to-read"], 0.5),
]
AFTER_READS: list[tuple[str, list[str]]] = [
    ("  kg query reading-queue --limit 100", ["query", "reading-queue", "--limit", "100", "-f", "jsonl"]),
    ("  kg reading list --status to-read", ["reading", "list", "--status", "to-read", "-f", "csv"]),
    ("  kg show ZeRO", ["show", "ZeRO"]),
    ("  kg search grouped query attention", ["search", "grouped query attention", "-f", "csv"]),
]


def reads_after(big: Path, startup: float, *, cap: float, row: Callable[..., None]) -> None:
    """The reads of :data:`AFTER_READS` after a write, each against start-up + 1 s, with
    whether the tables answered them."""
    for label, reads in AFTER_READS:
        read = kg(label.strip(), big, *reads, cap=cap)
        goal_row(row, label + (" (duckdb)" if "DuckDB" in read.err else ""), read, startup, 1, cap)


def goal_row(row: Callable[..., None], what: str, done: Run, startup: float, allowed: float, cap: float) -> None:
    """The row of ``done`` against its goal, start-up + ``allowed`` s."""
    goal = startup + allowed
    row(what, _s(done.seconds, cap), f"start-up + {allowed:g} s {goal:.2f} s", _ratio(done.seconds, goal),
        done.rss_mb, "≤ 1.00x")


def _stale(done: Run) -> str:
    """What a write's row adds where the write left the tables stale (and said so)."""
    return " (said stale)" if "stale" in done.err else ""


#: The papers of the import that the tables are kept fresh through.
NEW_PAPERS = 1000


def new_papers(drawn: str) -> tuple[str, str]:
    """Of a corpus drawn apart (N-Triples), its papers renamed so that the store does not hold
    them: as a later arXiv ingest brings them (each paper's own facts, and its authors with
    their names), and whole (also the techniques, authors, repositories and categories it
    names, drawn again: 50 techniques with other lineage parents and categories, 999 authors
    with other affiliations)."""
    whole = drawn.replace(f"{BASE}paper/", f"{BASE}paper/new-")
    person = re.compile(rf"<{re.escape(BASE)}person/\d+> <(?:{re.escape(RDF)}type|{re.escape(FOAF)}name)> ")
    own = "".join(line for line in whole.splitlines(keepends=True)
                  if line.startswith(f"<{BASE}paper/") or person.match(line))
    return own, whole


def import_new_papers(big: Path, startup: float, *, cap: float, row: Callable[..., None]) -> None:
    """``kg import rdf`` of :data:`NEW_PAPERS` papers the store does not hold (linked, as an
    import links them), the tables kept fresh by it, against a full ``kg analytics build``
    measured just before; then the reads of :data:`AFTER_READS`. Then the same papers again,
    as a second import that also draws again the techniques, authors and repositories they
    name (:func:`new_papers`): what a build patches when an import changes lineage."""
    full = kg("kg analytics build --full", big, "analytics", "build", "--full", cap=cap)
    folder = Path(tempfile.mkdtemp(prefix="kg-bench-new-"))
    try:
        drawn = generate(NEW_PAPERS, seed=46, out=folder / "drawn.nt")
        own, whole = new_papers(drawn.path.read_text(encoding="utf-8"))
        (folder / "new.nt").write_text(own, encoding="utf-8")
        (folder / "whole.nt").write_text(whole, encoding="utf-8")
        done = kg(f"kg import rdf ({NEW_PAPERS:,} new papers)", big, "import", "rdf", str(folder / "new.nt"),
                  "--graph", "new-papers", "-f", "json", cap=cap)
        row(f"kg import rdf ({NEW_PAPERS:,} new papers){_stale(done)}", _s(done.seconds, cap),
            f"analytics build --full {_s(full.seconds, cap)}", _ratio(done.seconds, full.seconds), done.rss_mb,
            "≤ 0.20x")
        reads_after(big, startup, cap=cap, row=row)
        redrawn = kg("kg import rdf (and what they name)", big, "import", "rdf", str(folder / "whole.nt"),
                     "--graph", "new-papers-whole", "-f", "json", cap=cap)
        row(f"  again, techniques redrawn{_stale(redrawn)}", _s(redrawn.seconds, cap),
            f"analytics build --full {_s(full.seconds, cap)}", _ratio(redrawn.seconds, full.seconds),
            redrawn.rss_mb, "")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def accept_suggestion(big: Path, startup: float, *, cap: float, row: Callable[..., None]) -> None:
    """``kg suggest accept`` of an edge that a citation planted in the store proposes
    (:mod:`bench.planted`; the tables brought up to date after it, untimed), against
    start-up; then the reads of :data:`AFTER_READS`."""
    planted = run("bench.planted", [sys.executable, "-m", "bench.planted", str(big)], cap=cap, keep=True)
    if planted.code != 0:
        raise RuntimeError(f"planting a citation failed:\n{planted.err[-2000:]}")
    pair = json.loads(planted.out.strip().splitlines()[-1])
    kg("kg analytics build", big, "analytics", "build", cap=cap)
    listed = kg("kg suggest lineage", big, "suggest", "lineage", "-f", "json", cap=cap, keep=True)
    goal_row(row, "kg suggest lineage", listed, startup, 1, cap)
    ident = next((s["id"] for s in json.loads(listed.out)["suggestions"]
                  if (s["child_id"], s["parent_id"]) == (pair["child"], pair["parent"])), None)
    if ident is None:
        raise RuntimeError(f"kg suggest lineage did not propose the planted {pair['child']} -> {pair['parent']}: "
                           "was it accepted or rejected in an earlier run on this store? Run on a fresh copy")
    done = kg("kg suggest accept", big, "suggest", "accept", ident, "-f", "json", cap=cap)
    goal_row(row, f"kg suggest accept{_stale(done)}", done, startup, 1, cap)
    reads_after(big, startup, cap=cap, row=row)


def after_writes(big: Path, startup: float, *, cap: float) -> None:
    """Each write, then the reads a user makes next: their times against start-up (the
    analytics tables fresh before the write, kept fresh by it)."""

    def row(what: str, ours: str, baseline: str, ratio: str, rss: float, goal: str) -> None:
        print(ROW.format(what, ours, baseline, ratio, f"{rss:,.0f}", goal), flush=True)

    print("after a write (tables fresh before it):", flush=True)
    import_new_papers(big, startup, cap=cap, row=row)
    for what, argv, allowed in AFTER_WRITES:
        done = kg(what, big, *argv, cap=cap)
        goal_row(row, what + _stale(done), done, startup, allowed, cap)
        reads_after(big, startup, cap=cap, row=row)
    accept_suggestion(big, startup, cap=cap, row=row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=700_000)
    parser.add_argument("--replace-papers", type=int, default=77_000,
                        help="papers in the graph that is loaded and then replaced (77k ≈ 1M triples)")
    parser.add_argument("--cap", type=float, default=600.0, help="seconds allowed to any one process")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (printed) afterwards")
    parser.add_argument("--only", choices=["queries", "fallback", "writes"],
                        help="queries: only start-up and the named queries, on --store; fallback: only start-up and "
                             "--fallback's section, on --store; writes: only start-up and the section after a "
                             "write, on --store (changed: use a copy)")
    parser.add_argument("--fallback", action="store_true",
                        help="also every named query answered by SPARQL, as with the tables stale (bench.fallback)")
    parser.add_argument("--store", type=Path,
                        help="with --only queries: an existing store (kg analytics build done), used read-only")
    parser.add_argument("--raw-cap", type=float,
                        help="seconds allowed to each raw pyoxigraph query (default: --cap)")
    parser.add_argument("--formats", default="jsonl",
                        help="comma-separated -f formats of the whole results whose goal is start-up + 1 s "
                             "(default jsonl; e.g. jsonl,csv,tsv,json,xml,table)")
    parser.add_argument("--queries", help="comma-separated names: only these of the named queries (default: all)")
    args = parser.parse_args()
    cap = args.cap
    raw_cap = args.raw_cap or cap
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    names = {n.strip() for n in args.queries.split(",")} if args.queries else None
    if args.only in ("queries", "fallback"):
        if args.store is None:
            parser.error(f"--only {args.only} measures an existing store: pass --store DIR")
        print(ROW.format("what", "kg (this tree)", "baseline (same run)", "ratio", "RSS MB", "goal"))
        helps = [run("kg --help", [sys.executable, "-c", KG_MAIN, "--help"], cap=cap) for _ in range(3)]
        startup = _median_run(helps).seconds or 0.0
        print(f"start-up: kg --help {startup:.2f} s (median of 3); store {args.store}", flush=True)
        work = Path(tempfile.mkdtemp(prefix="kg-bench-scale-"))
        try:
            if args.only == "queries":
                query_rows(args.store, work, startup, cap=cap, raw_cap=raw_cap, formats=formats, names=names)
            if args.fallback or args.only == "fallback":
                fallback.section(args.store, startup, cap=cap, kg=kg, names=names)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(f"\npeak RSS: {max(PEAKS.values()):,.0f} MB ({max(PEAKS, key=PEAKS.__getitem__)})")
        return
    if args.only == "writes":
        if args.store is None:
            parser.error("--only writes changes an existing store (a copy): pass --store DIR")
        print(ROW.format("what", "kg (this tree)", "baseline (same run)", "ratio", "RSS MB", "goal"))
        helps = [run("kg --help", [sys.executable, "-c", KG_MAIN, "--help"], cap=cap) for _ in range(3)]
        startup = _median_run(helps).seconds or 0.0
        print(f"start-up: kg --help {startup:.2f} s (median of 3); store {args.store}", flush=True)
        after_writes(args.store, startup, cap=cap)
        print(f"\npeak RSS: {max(PEAKS.values()):,.0f} MB ({max(PEAKS, key=PEAKS.__getitem__)})")
        return

    work = Path(tempfile.mkdtemp(prefix="kg-bench-scale-"))

    def row(what: str, ours: str, baseline: str, ratio: str, rss: float, goal: str) -> None:
        print(ROW.format(what, ours, baseline, ratio, f"{rss:,.0f}", goal), flush=True)

    try:
        start = time.perf_counter()
        corpus = generate(args.papers, seed=42, out=work / "corpus.nt")
        print(f"corpus: {corpus.triples:,} triples ({corpus.papers:,} papers, {corpus.techniques:,} synthetic "
              f"techniques), {corpus.path.stat().st_size / 1e6:,.0f} MB, written in "
              f"{time.perf_counter() - start:.0f} s; work folder {work}\n", flush=True)
        print(ROW.format("what", "kg (this tree)", "baseline (same run)", "ratio", "RSS MB", "goal"))

        helps = [run("kg --help", [sys.executable, "-c", KG_MAIN, "--help"], cap=cap) for _ in range(3)]
        startup = _median_run(helps).seconds or 0.0
        big, small = work / "store", work / "small"
        built = kg("kg build", big, "build", cap=cap)
        row("kg build (the catalog)", _s(built.seconds, cap), "", "", built.rss_mb, "")
        shutil.copytree(big, small)

        # Loads: pyoxigraph's bulk_load first (it also brings the file into the page cache), and
        # again after ours: at 700k papers one load differs from the next by up to a fifth, the
        # later one most (the disk still writes back the one before), so the baseline is their mean.
        def raw_load() -> float | None:
            raw, _ = child("pyoxigraph bulk_load", RAW_LOAD, str(work / "raw-store"), str(corpus.path), cap=cap)
            shutil.rmtree(work / "raw-store", ignore_errors=True)
            return raw.get("seconds")

        before = raw_load()
        imported = kg("kg import rdf", big, "import", "rdf", str(corpus.path), "--graph", "bench", "--no-link",
                      "-f", "json", cap=cap)
        after = raw_load()
        load_s = None if before is None or after is None else (before + after) / 2
        print(f"bulk_load: {_s(before, cap)} before kg import rdf, {_s(after, cap)} after it", flush=True)
        # throughput ratio: the loader's seconds over ours
        row(f"kg import rdf ({corpus.triples / 1e6:.1f}M triples)", _s(imported.seconds, cap),
            f"bulk_load {_s(load_s, cap)}", _ratio(load_s, imported.seconds), imported.rss_mb,
            "≥ 0.9x (throughput)")
        linked = kg("kg link", big, "link", "-f", "json", cap=cap)
        row("kg link (every paper)", _s(linked.seconds, cap), f"kg import rdf {_s(imported.seconds, cap)}",
            _ratio(linked.seconds, imported.seconds), linked.rss_mb, "≤ 0.3x")

        compaction_row(row, big, cap=cap)
        validated = kg("kg validate", big, "validate", "-f", "json", cap=cap, check=False)
        row("kg validate (after the import)", _s(validated.seconds, cap), f"bulk_load {_s(load_s, cap)}",
            _ratio(validated.seconds, load_s), validated.rss_mb, "≤ 0.5x")
        again = kg("kg validate", big, "validate", "-f", "json", cap=cap, check=False)
        row("kg validate (nothing changed)", _s(again.seconds, cap), f"kg --help {startup:.2f} s",
            _ratio(again.seconds, startup), again.rss_mb, "")

        analysed = kg("kg analytics build", big, "analytics", "build", cap=cap)
        row("kg analytics build", _s(analysed.seconds, cap), f"bulk_load {_s(load_s, cap)}",
            _ratio(analysed.seconds, load_s), analysed.rss_mb, "≤ 0.5x, < 4,096 MB")
        # one reading status changed: only the reading graph is read again
        kg("kg reading set", big, "reading", "set", "https://arxiv.org/abs/2512.14080", "reading", cap=cap)
        changed = kg("kg analytics build", big, "analytics", "build", cap=cap)
        row("kg analytics build (a status changed)", _s(changed.seconds, cap),
            f"full build {_s(analysed.seconds, cap)}", _ratio(changed.seconds, analysed.seconds), changed.rss_mb, "")
        # the first search after the import makes the index again (the import left it stale, too big to follow)
        searched = kg("kg search (the first)", big, "search", "grouped query attention", "-f", "json", cap=cap)
        made = "search index" in searched.err  # "made the search index", "brought the search index up to date"
        row(f"kg search (the first{', makes the index' if made else ''})", _s(searched.seconds, cap),
            f"bulk_load {_s(load_s, cap)}", _ratio(searched.seconds, load_s), searched.rss_mb, "< 1,024 MB")
        found = kg("kg search", big, "search", "grouped query attention", "-f", "json", cap=cap)
        goal_row(row, "  kg search (the index fresh)", found, startup, 1, cap)

        # small and big store in turn, so that both see the same machine load
        openings: dict[Path, list[Run]] = {small: [], big: []}
        for _ in range(5):
            for store in (small, big):
                openings[store].append(kg("kg query ancestors", store, "query", "ancestors", "-p", "technique=ZeRO",
                                          "-f", "jsonl", cap=cap))
        opening_small, opening = _median_run(openings[small]), _median_run(openings[big])
        row("kg query ancestors (open + answer)", _s(opening.seconds, cap),
            f"on kg build alone {_s(opening_small.seconds, cap)}", _ratio(opening.seconds, opening_small.seconds),
            opening.rss_mb, "1.00x (no growth)")
        row("start-up: kg --help", f"{startup:.2f} s", "", "", _median_run(helps).rss_mb, "")

        query_rows(big, work, startup, cap=cap, raw_cap=raw_cap, formats=formats, names=names)
        after_writes(big, startup, cap=cap)
        if args.fallback:
            fallback.section(big, startup, cap=cap, kg=kg, names=names)

        # Replacing a graph of about a million triples that already holds data. A load leaves
        # RocksDB's compaction of its files to the next process that opens the store for
        # writing, which pays for it (on 2 cores, with its own time): each load below starts
        # from a settled store, so that the two are compared on equal terms, and the cost of
        # a replacement that inherits a load's compaction is shown beside them.
        replace_papers = min(args.replace_papers, args.papers)
        first_file = generate(replace_papers, seed=43, out=work / "replace-1.nt")
        second_file = generate(replace_papers, seed=44, out=work / "replace-2.nt")
        settle_row(row, big, f"the {corpus.triples / 1e6:.1f}M-triple import", cap=cap)
        first_load = kg("kg import rdf (first)", big, "import", "rdf", str(first_file.path), "--graph", "replace",
                        "--no-link", "-f", "json", cap=cap)
        settle_row(row, big, "the first load", cap=cap)
        replaced = kg("kg import rdf (replace)", big, "import", "rdf", str(second_file.path), "--graph", "replace",
                      "--no-link", "-f", "json", cap=cap, keep=True)
        row(f"replacing a {first_file.triples / 1e6:.1f}M-triple graph{_changed(replaced)}", _s(replaced.seconds, cap),
            f"first load {_s(first_load.seconds, cap)}", _ratio(replaced.seconds, first_load.seconds),
            replaced.rss_mb, f"≤ 2x, memory flat (first: {first_load.rss_mb:,.0f} MB)")
        back = kg("kg import rdf (replace back)", big, "import", "rdf", str(first_file.path), "--graph", "replace",
                  "--no-link", "-f", "json", cap=cap, keep=True)
        row(f"  and back at once{_changed(back)}", _s(back.seconds, cap),
            f"first load {_s(first_load.seconds, cap)}", _ratio(back.seconds, first_load.seconds), back.rss_mb,
            "(the replacement's compaction pending)")
        # The same graph refreshed as a later ingest would: 5% of its papers revised, 2% added.
        refreshed_file = work / "replace-3.nt"
        refresh(first_file.path, out=refreshed_file, changed=0.05, added=0.02)
        refreshed = kg("kg import rdf (refresh)", big, "import", "rdf", str(refreshed_file), "--graph", "replace",
                       "--no-link", "-f", "json", cap=cap, keep=True)
        row(f"refreshing it, 5% changed, 2% new{_changed(refreshed)}",
            _s(refreshed.seconds, cap), f"first load {_s(first_load.seconds, cap)}",
            _ratio(refreshed.seconds, first_load.seconds), refreshed.rss_mb, "")
        # Again, as kg import rdf does by default: the papers it changed linked again, found
        # from what the replacement changed (the graph is past kg.linking.refresh.DIGEST_MOST).
        # The first time, the papers that the names of the graph's techniques (loaded with
        # --no-link above) can match are linked too.
        for seed, label in ((46, "  again, linked (its techniques' names too)"), (47, "  and again, linked")):
            refresh(first_file.path, out=refreshed_file, changed=0.05, added=0.02, seed=seed)
            linked = kg("kg import rdf (refresh, linked)", big, "import", "rdf", str(refreshed_file), "--graph",
                        "replace", "-f", "json", cap=cap, keep=True)
            row(f"{label}{_changed(linked)}", _s(linked.seconds, cap), f"first load {_s(first_load.seconds, cap)}",
                _ratio(linked.seconds, first_load.seconds), linked.rss_mb, "")

        print(f"\npeak RSS: {max(PEAKS.values()):,.0f} MB ({max(PEAKS, key=PEAKS.__getitem__)}); "
              f"per process: " + ", ".join(f"{k} {v:,.0f}" for k, v in PEAKS.items()))
        print(f"start-up (kg --help, median of 3): {statistics.median(h.seconds or 0.0 for h in helps):.2f} s")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
