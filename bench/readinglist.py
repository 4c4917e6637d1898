"""Reading-list benchmark: importing a large generated reading list, then replacing it
with a short one, as the real ``kg`` process, against the code at ``--baseline-rev`` in
the same run (checked out with ``git archive``, as :mod:`bench.store` does).

    python -m bench.readinglist                   # 50,000 rows, then 5
    python -m bench.readinglist --rows 10000      # quicker
    python -m bench.readinglist --baseline-rev HEAD~1

For each code it prints the wall and CPU seconds and peak memory (the child's rusage) of
``kg import reading-list`` with the large list on a built store, then with the short list,
and the triples of the ``reading`` and ``reading-list`` graphs after each. Issue #30's
target: both steps cost in proportion to what they change (the short list replacing the
large one must not grow the reading graph).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from bench.store import Timed, baseline_checkout, run_kg

#: The integrated line the work on issue #30's reading-list item started from.
BASELINE_REV = "57b4949"
HEADER = "Status\tPaper\tVenue\tWhy It Matters\tLinks"
_COUNT = ("SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <https://w3id.org/techkg/graph/{graph}> {{ ?s ?p ?o }} }}")


def write_list(path: Path, rows: int, *, sections: int = 20) -> None:
    """A reading list of ``rows`` distinct papers in ``sections`` categories; one row in
    four is read, one in ten has a note."""
    lines = [f"Generated reading list ({rows} rows)", ""]
    per = max(1, -(-rows // sections))
    for start in range(0, rows, per):
        lines += [f"Category {start // per:03d}", "", HEADER]
        for i in range(start, min(rows, start + per)):
            mark = "✅" if i % 4 == 0 else "⬜"
            note = " 📝" if i % 10 == 0 else ""
            lines.append(f"{mark}{note}\tSynthetic paper {i:06d} on training at scale\tarXiv'25\t"
                         f"why paper {i} matters\tPaper")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def count(store: Path, graph: str, code: Path | None) -> int:
    out = run_kg(["--store", str(store), "sparql", _COUNT.format(graph=graph), "-f", "json"], code=code).out
    answer = json.loads(out[out.index("{"):])
    return int(answer["results"]["bindings"][0]["n"]["value"])


def measure(work: Path, name: str, code: Path | None, big: Path, small: Path) -> dict[str, object]:
    store = work / f"store-{name}"
    shutil.rmtree(store, ignore_errors=True)
    run_kg(["--store", str(store), "build"], code=code)
    out: dict[str, object] = {"before": count(store, "reading", code)}
    imported: Timed = run_kg(["--store", str(store), "import", "reading-list", str(big)], code=code)
    out.update(imported=imported, after_import=count(store, "reading", code),
               list_after_import=count(store, "reading-list", code))
    replaced: Timed = run_kg(["--store", str(store), "import", "reading-list", str(small)], code=code)
    out.update(replaced=replaced, after_replace=count(store, "reading", code),
               list_after_replace=count(store, "reading-list", code))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000, help="rows of the large list")
    parser.add_argument("--small", type=int, default=5, help="rows of the list that replaces it")
    parser.add_argument("--baseline-rev", default=BASELINE_REV, help="the code measured as the baseline")
    parser.add_argument("--no-baseline", action="store_true", help="measure this tree only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-bench-rlist-") as tmp:
        work = Path(tmp)
        big, small = work / "big.md", work / "small.md"
        write_list(big, args.rows)
        write_list(small, args.small, sections=1)
        old = None if args.no_baseline else baseline_checkout(args.baseline_rev, work / "baseline")
        results = {"now": measure(work, "now", None, big, small)}
        if old is not None:
            results["baseline"] = measure(work, "baseline", old, big, small)
    print(f"\nreading list: {args.rows:,} rows imported on a built store, then replaced by {args.small}; "
          f"baseline = the code at {args.baseline_rev if old is not None else '(none)'}")
    print(f"{'':10} {'step':28} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'reading triples':>22}")
    for name, r in results.items():
        for step, key, before, after in (("import the large list", "imported", "before", "after_import"),
                                         ("replace it with the short", "replaced", "after_import", "after_replace")):
            t = r[key]
            assert isinstance(t, Timed)
            print(f"{name:10} {step:28} {t.wall:8.1f} {t.cpu:8.1f} {t.rss_mb:8.0f} "
                  f"{r[before]:>10,} -> {r[after]:>9,}")
        print(f"{'':10} reading-list graph: {r['list_after_import']:,} triples after the import, "
              f"{r['list_after_replace']:,} after the replacement")
    if "baseline" in results:
        now, base = results["now"], results["baseline"]
        for key, label in (("imported", "import"), ("replaced", "replace")):
            n, b = now[key], base[key]
            assert isinstance(n, Timed) and isinstance(b, Timed)
            print(f"ratio now/baseline, {label:8} wall {n.wall / b.wall:5.2f}x, "
                  f"peak memory {n.rss_mb / b.rss_mb:5.2f}x")


if __name__ == "__main__":
    main()
