"""Benchmarks: each prints its figures beside a baseline measured in the same run
(``python -m bench [NAME ...]``, ``make bench``), on the seeded synthetic corpus of
:mod:`bench.corpus`.

What belongs here: one module per benchmark, named for what it measures, and the corpus
they share. What does not: a timed test (tests assert behaviour, benchmarks print ratios)
or code the product runs. A benchmark may use any package, as the CLI does; only
:mod:`bench.kernels` imports torch (it times the kernels), a named exception of the
import contracts in ``pyproject.toml``.
"""
