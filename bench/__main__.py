"""Run every benchmark in bench/ one after another: ``python -m bench [name ...]``."""

from __future__ import annotations

import runpy
import sys
import time

BENCHMARKS = ("store", "ingest", "zotero", "queries", "analytics", "exports", "kernels", "web", "citations")


def main() -> None:
    names = sys.argv[1:] or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        sys.exit(f"unknown benchmark {unknown[0]!r}; choose from: {', '.join(BENCHMARKS)}")
    failed = []
    for name in names:
        print(f"\n=== bench.{name} " + "=" * 60, flush=True)
        start = time.perf_counter()
        sys.argv = [f"bench.{name}"]
        try:
            runpy.run_module(f"bench.{name}", run_name="__main__")
        except SystemExit as stop:  # a benchmark's own main() ends with sys.exit(code)
            if stop.code not in (None, 0):
                failed.append(name)
        print(f"=== bench.{name} took {time.perf_counter() - start:.0f} s", flush=True)
    if failed:
        sys.exit(f"benchmarks that failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
