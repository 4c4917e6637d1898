"""Run benchmarks in bench/ one after another: ``python -m bench [name ...]``, or one
benchmark with its options: ``python -m bench scale --papers 100000``."""

from __future__ import annotations

import runpy
import sys
import time

BENCHMARKS = ("store", "ingest", "zotero", "queries", "analytics", "exports", "kernels", "web", "citations", "search",
              "suggestions", "links")
#: Run only when named: ``scale`` takes about 15 minutes at its default size, ``readinglist``
#: compares with another revision of the tree, ``fallback`` measures a store given to it.
BY_NAME = ("scale", "readinglist", "fallback")


def main() -> None:
    argv = sys.argv[1:]
    if argv in (["-h"], ["--help"]):
        print(f"usage: python -m bench [NAME ...] | python -m bench NAME [options]\n\n{__doc__.strip()}\n\n"
              f"benchmarks: {', '.join(BENCHMARKS)}; only when named: {', '.join(BY_NAME)}.\n"
              "python -m bench.NAME --help lists one benchmark's options.")
        return
    split = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names, options = argv[:split] or list(BENCHMARKS), argv[split:]
    unknown = [n for n in names if n not in BENCHMARKS + BY_NAME]
    if unknown:
        sys.exit(f"unknown benchmark {unknown[0]!r}; choose from: {', '.join(BENCHMARKS + BY_NAME)}")
    if options and len(names) != 1:
        sys.exit("options go to one benchmark: python -m bench NAME [options], e.g. python -m bench web --papers 10000")
    failed = []
    for name in names:
        print(f"\n=== bench.{name} " + "=" * 60, flush=True)
        start = time.perf_counter()
        sys.argv = [f"bench.{name}", *options]
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
