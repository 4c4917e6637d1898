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
"""

from __future__ import annotations

from collections.abc import Callable
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
ROW = "{:34} {:>9} {:>11} {:>9} {:>8} {:>8}  {}"


def named_selects() -> list[str]:
    """The SELECT named queries, by name."""
    import queries

    return [q.name for q in queries.all_queries() if q.kind == "select"]


def section(store: Path, startup: float, *, cap: float, kg: Callable[..., Any],
            names: set[str] | None = None) -> None:
    """Print the fallback rows for ``store`` (see the module's text). ``kg`` runs one kg process
    (bench.scale.kg, of the running module, so that its peaks are counted there)."""

    goal = startup + 1.0
    print(f"\nfallback: every named query answered by SPARQL on the store "
          f"(kg query --sparql); "
          f"goal: first {FIRST} rows ≤ start-up + 1 s = {goal:.2f} s", flush=True)
    print(ROW.format("named query", "rows", f"first {FIRST}", "ratio", "whole", "RSS MB", "answered by"), flush=True)
    force = ["--sparql"]
    worst: tuple[float, str] = (0.0, "")
    peak = 0.0
    misses: list[str] = []

    def seconds(done: Any) -> str:
        return f"> {cap:.0f} s" if done.seconds is None else f"{done.seconds:.2f} s"

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
        ratio = "" if page.seconds is None else f"{page.seconds / goal:.2f}x"
        source = _source(page.err)
        if source == "DuckDB":
            misses.append(name)
        rss = max(page.rss_mb, whole.rss_mb)
        peak = max(peak, rss)
        print(ROW.format(name, f"{whole.lines:,}" if whole.seconds is not None else "?", seconds(page), ratio,
                         seconds(whole), f"{rss:,.0f}", source), flush=True)
        slowest = page.seconds if page.seconds is not None else float("inf")
        worst = max(worst, (slowest, name))
    print(f"fallback: slowest first page {worst[1]} {worst[0]:.2f} s = {worst[0] / goal:.2f}x start-up + 1 s; "
          f"peak RSS {peak:,.0f} MB", flush=True)
    if misses:
        print(f"  note: answered from the tables, not by SPARQL: {', '.join(misses)}", flush=True)


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
