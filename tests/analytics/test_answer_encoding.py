"""Answers from the analytics tables written column by column (kg.analytics.encoding):
byte for byte what kg.results.write_solutions writes for the same rows as terms."""

from __future__ import annotations

import io

import pytest

import kg.answer
import queries
from kg.analytics.encoding import term, write_columns
from kg.analytics.twins import TWINS
from kg.resolve import Resolver
from kg.results import RESULT_FORMATS, write_solutions

X = "http://www.w3.org/2001/XMLSchema#"
#: Texts that every escape of every format has to get right.
TEXTS = ["plain", 'a "quoted" \\ back\\slash', "tab\there\nnew\r\nline", "\x00\x01\x0b\x1f\x7f del", "é ü 中文 😀",
         "\u2028\u2029\ufeff\ufffe\uffff", "<tag attr='x'> & &amp;", "a,b;c|d", " lead and trail ", "", "_:looks-blank",
         "%s %(x)s {}", "=cmd", '"', "\\u00e9"]


def _cells() -> list[tuple[str, object, object]]:
    """(kind, value, marker) cells of every kind the twins' SQL gives, odd ones included."""
    cells: list[tuple[str, object, object]] = []
    for text in TEXTS:
        cells += [("string", text, None), ("langEn", text, None), ("term", text, ""), ("term", text, "@en"),
                  ("term", text, "@en-gb"), ("term", text, X + "string"), ("term", text, "http://example.org/dt?a&b"),
                  ("dateTime", text, None), ("date", text, None)]
    cells += [("iri", "https://arxiv.org/abs/2104.04473", None), ("iri", "_:b0", None), ("term", "_:b1", "_"),
              ("term", "http://example.org/a?x=1&y=2", None), ("term", "_:b2", None), ("term", "x", "@EN"),
              ("iri", "http://example.org/é", None)]
    numbers = ["0", "-7", "007", " 5", "+3", "1_000", "12345678901234567890123", "1.5", "1e20", "-0.0", "NaN", "INF",
               "-INF", "abc", ""]
    for number in numbers:
        cells += [("term", number, X + dt) for dt in ("integer", "int", "decimal", "double", "float")]
    for flag in ("true", "false", "1", "0", "yes"):
        cells += [("boolean", flag, None), ("term", flag, X + "boolean")]
    cells += [("integer", n, None) for n in (0, -1, 2**70, True)]
    return cells


@pytest.mark.parametrize("fmt", sorted(RESULT_FORMATS))
def test_every_kind_of_cell_is_written_as_its_term_is(fmt: str) -> None:
    cells = _cells()
    # One column per kind of cell, rows of each, unbound cells between them.
    width = 3
    columns: list[list[tuple[str, object, object] | None]] = [[] for _ in range(width)]
    for i, cell in enumerate(cells):
        for c in range(width):
            columns[c].append(cell if (i + c) % 4 else None)
    variables = ["a", "b", "c"]
    expected = io.BytesIO()
    rows = [tuple(term(*cell) if cell else None for cell in row) for row in zip(*columns, strict=True)]
    write_solutions(variables, rows, fmt, expected)
    # The same cells as batches of columns: a column holds one kind (per batch), so write a batch per cell.
    batches = []
    for row in zip(*columns, strict=True):
        batch = []
        for cell in row:
            kind, value, marker = cell if cell else ("term", None, None)
            batch.append((kind, [value], [marker] if kind == "term" else None))
        batches.append(batch)
    got = io.BytesIO()
    assert write_columns(variables, batches, fmt, got) == len(rows)
    assert got.getvalue() == expected.getvalue()


def test_a_batch_of_many_rows_matches_row_by_row() -> None:
    """Whole columns at once (the fast path of JSON Lines and CSV) and cells one by one agree."""
    cells = [c for c in _cells() if c[0] == "term"]
    values = [c[1] for c in cells] + [None]
    markers = [c[2] for c in cells] + [None]
    rows = [(term("term", v, m),) for v, m in zip(values, markers, strict=True)]
    for fmt in RESULT_FORMATS:
        expected, got = io.BytesIO(), io.BytesIO()
        write_solutions(["x"], rows, fmt, expected)
        write_columns(["x"], [[("term", values, markers)]], fmt, got)
        assert got.getvalue() == expected.getvalue(), fmt


CASES = [(name, {}) for name in TWINS if name not in ("new-since", "reading-queue-lineage", "papers-by-author")] + [
    ("new-since", {"since": "2025-06-01"}), ("reading-queue-lineage", {"technique": "ZeRO"}),
    ("repositories", {"minStars": "20000"})]


@pytest.mark.parametrize(("name", "params"), CASES, ids=[f"{n}{'-' + '-'.join(p) if p else ''}" for n, p in CASES])
def test_a_twin_writes_the_bytes_of_its_rows_as_terms_in_every_format(analysed_store, name: str,
                                                                      params: dict[str, str]) -> None:
    named = queries.get(name)
    for fmt in RESULT_FORMATS:
        for limit in (None, 3):
            if limit is not None and not named.page:
                continue
            by_terms = kg.answer.answer(analysed_store, named, params, Resolver(analysed_store), limit=limit)
            direct = kg.answer.answer(analysed_store, named, params, Resolver(analysed_store), limit=limit)
            assert by_terms.source == direct.source == "duckdb" and direct.write is not None
            expected, got = io.BytesIO(), io.BytesIO()
            count = write_solutions(by_terms.page.variables, by_terms.page, fmt, expected)
            assert count, f"{name} should have rows on the test corpus"
            assert direct.write(fmt, got) == count
            assert got.getvalue() == expected.getvalue(), (name, fmt, limit)
            assert direct.page.next == by_terms.page.next, (name, fmt, limit)
