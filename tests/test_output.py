"""Terminal tables at 80, 100 and 160 columns: nothing split, short columns whole, records when it cannot fit."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from kg.cli.output import emit, emit_machine, render, shorten

WIDTHS = (80, 100, 160)

KERNEL_ROWS = [
    {"technique": "gated-deltanet", "check": "chunk-vs-recurrent", "max_abs": "1.31e-06", "tolerance": "1e-05",
     "result": "pass", "seconds": "0.412"},
    {"technique": "auxiliary-loss-free-balancing", "check": "unbiased-weights", "max_abs": "0.00e+00",
     "tolerance": "1e-06", "result": "pass", "seconds": "0.006"},
    {"technique": "mla", "check": "absorbed-equals-naive", "max_abs": "2.38e-07", "tolerance": "1e-05",
     "result": "FAIL", "seconds": "12.035"},
]

PROSE_ROWS = [
    {"id": "gdn", "papers": 3, "year": 2024,
     "summary": "Gated DeltaNet combines the delta rule with a data-dependent gate, so the state can both forget "
                "quickly and write precisely; it trains in chunks of 64 tokens with a WY representation."},
    {"id": "kda", "papers": 1, "year": 2025,
     "summary": "Kimi Delta Attention refines the gate of Gated DeltaNet to one decay per channel."},
]


def _tokens(text: str) -> set[str]:
    return set(text.split())


def _assert_nothing_split(text: str, rows: list[dict[str, object]], width: int) -> None:
    """Every word of every cell is a whole word of the output (a compound of letters may break after
    its hyphen: "data-|dependent"), and no line is wider than the terminal."""
    lines = text.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines), max(lines, key=len)
    out = _tokens(text)
    for row in rows:
        for value in row.values():
            for word in str(value).split():
                pieces = re.split(r"(?<=[A-Za-z]{2}-)(?=[A-Za-z])", word)
                assert word in out or set(pieces) <= out, f"{word!r} was split or lost at {width} columns:\n{text}"


@pytest.mark.parametrize("width", WIDTHS)
def test_numbers_and_ids_are_never_split(width: int) -> None:
    text = render(KERNEL_ROWS, width=width, title="Verification on cpu",
                  headers={"max_abs": "max abs err", "seconds": "time (s)"})
    _assert_nothing_split(text, KERNEL_ROWS, width)
    assert "1.31e-06" in text and "auxiliary-loss-free-balancing" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_short_columns_stay_on_one_line_and_prose_folds(width: int) -> None:
    text = render(PROSE_ROWS, width=width)
    _assert_nothing_split(text, PROSE_ROWS, width)
    first = next(line for line in text.splitlines() if line.startswith("gdn"))
    assert re.search(r"gdn\s+3\s+2024\s+Gated", first)  # id, count and year on the row's first line
    folded = len([line for line in text.splitlines() if line.strip()])
    assert folded > 4 if width < 160 else folded >= 4  # header, rule, and the two rows (folded when narrow)


def test_a_wide_terminal_keeps_every_row_on_one_line() -> None:
    text = render(KERNEL_ROWS, width=160)
    assert len([line for line in text.splitlines() if line.strip()]) == 2 + len(KERNEL_ROWS)


@pytest.mark.parametrize("width", WIDTHS)
def test_headers_with_underscores_read_as_words_and_never_split(width: int) -> None:
    rows = [{"techniques_in_lineage": 33, "edges": 26, "roots": 9, "leaves": 15, "max_depth": 3,
             "mean_depth": 1.12, "max_fan_out": 5, "mean_fan_out": 1.44}]
    text = render(rows, width=width, title="Lineage at a glance")
    words = _tokens(text)
    assert {"techniques", "in", "lineage", "mean", "fan", "out", "1.44", "33"} <= words
    assert not [w for w in words if w.startswith("techniqu") and w != "techniques"]
    _assert_nothing_split(text, rows, width)


def test_a_table_that_cannot_fit_becomes_records() -> None:
    rows = [{f"column_{i}": f"value-{i}-{'x' * 8}" for i in range(8)} for _ in range(2)]
    text = render(rows, width=80, title="Wide")
    lines = text.splitlines()
    assert lines[0] == "Wide"
    assert sum(line.startswith("column 0:") for line in lines) == 2  # one block per row
    assert all(re.match(r"column \d: +value-\d-x{8}$", line) for line in lines if line.startswith("column"))
    _assert_nothing_split(text, rows, 80)


def test_records_fold_long_values_under_their_key_and_leave_empty_fields_out() -> None:
    rows = [{"technique": "gated-deltanet", "device": "", "claim": " ".join(["chunked"] * 40), **{
        f"c{i}": "x" * 9 for i in range(6)}}]
    text = render(rows, width=60)
    lines = text.splitlines()
    assert "device:" not in text
    claim = [i for i, line in enumerate(lines) if line.startswith("claim:")][0]
    indent = lines[claim].index("chunked")
    assert lines[claim + 1].startswith(" " * indent + "chunked")
    assert all(len(line.rstrip()) <= 60 for line in lines)


def test_short_cuts_the_table_cell_only(capsys: pytest.CaptureFixture[str]) -> None:
    note = "The delta rule, gated: " + "forget fast and write precisely. " * 6
    rows = [{"title": "Gated Delta Networks", "note": note}]
    assert "…" in render(rows, width=100, short={"note": 40})
    emit(rows, fmt="json", short={"note": 40})
    assert json.loads(capsys.readouterr().out)[0]["note"] == note
    emit(rows, fmt="csv", short={"note": 40})
    assert list(csv.DictReader(io.StringIO(capsys.readouterr().out)))[0]["note"] == note


def test_shorten_cuts_at_a_word() -> None:
    assert shorten("one two three four", 12) == "one two…"
    assert shorten("short", 12) == "short"
    assert shorten("line one\nline two", 40) == "line one line two"


def test_emit_machine_flattens_a_summary_for_csv(capsys: pytest.CaptureFixture[str]) -> None:
    summary = {"techniques": 39, "reading_list": {"entries": 53, "unmatched": ["a", "b"]}}
    assert emit_machine("csv", summary)
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {"key": "reading_list.entries", "value": "53"} in rows
    assert {"key": "reading_list.unmatched", "value": "a; b"} in rows
    assert emit_machine("json", summary) and json.loads(capsys.readouterr().out) == summary
    assert not emit_machine("table", summary) and capsys.readouterr().out == ""


@pytest.mark.parametrize("width", WIDTHS)
def test_dates_numbers_and_formulas_in_prose_stay_whole(width: int) -> None:
    rows = [{"dimension": "Core mechanism", "gdn": "State S_t = S_{t-1}·α_t(I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ, "
             "first shown 2024-12-09 at 1.31e-06 error" * 2, "kda": "Attention · 2025-10-30 · arXiv:2510.26692"}]
    text = render(rows, width=width)
    assert {"S_{t-1}·α_t(I", "2024-12-09", "1.31e-06", "2025-10-30", "arXiv:2510.26692"} <= _tokens(text)


def test_wide_characters_count_double() -> None:
    rows = [{"name": "Gated DeltaNet", "zh": "门控增量网络" * 3, "year": 2024}]
    for width in WIDTHS:
        text = render(rows, width=width)
        from rich.cells import cell_len

        assert all(cell_len(line.rstrip()) <= width for line in text.splitlines())


# -- many rows: printed as they come ----------------------------------------------------


def _many(n: int) -> list[dict[str, object]]:
    return [{"paper": f"https://arxiv.org/abs/2401.{i:05d}", "title": "Gated delta rule with chunked state "
             * (1 + i % 3) + f"({i})", "stars": i * 7} for i in range(n)]


def _streamed(capsys: pytest.CaptureFixture[str], rows: object) -> str:
    from kg.cli import output
    from kg.cli.output import emit_stream

    output._PRINTED["tables"] = 0  # as in a fresh process: no blank line before the first table

    emit_stream(rows, ["paper", "title", "stars"], title=lambda n: f"Papers: {n} rows",  # type: ignore[arg-type]
                streamed_title="Papers", footer=lambda n: f"{n:,} rows")
    return capsys.readouterr().out


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_table_prints_its_first_rows_as_a_short_one_and_every_row_once(
        width: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.cli.output import STREAM_ABOVE

    monkeypatch.setenv("COLUMNS", str(width))
    rows = _many(STREAM_ABOVE * 3)
    text = _streamed(capsys, iter(rows))
    lines = text.splitlines()
    assert lines[0] == "Papers" and lines[-1] == f"{len(rows):,} rows"
    short = render(rows[:STREAM_ABOVE], ["paper", "title", "stars"], width=width).splitlines()
    # The same layout as the table of the first rows alone, and the later rows folded to it.
    assert lines[1 : 1 + len(short)] == short
    assert all(len(line) <= width for line in lines)
    ids = re.findall(r"2401\.(\d{5})", text)
    assert ids == [f"{i:05d}" for i in range(len(rows))]
    _assert_nothing_split(text, rows[STREAM_ABOVE:STREAM_ABOVE + 50], width)


def test_a_long_table_is_written_before_its_last_row_is_read(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.cli.output import STREAM_ABOVE

    monkeypatch.setenv("COLUMNS", "100")
    seen: list[str] = []

    def rows():  # type: ignore[no-untyped-def]
        for i, row in enumerate(_many(STREAM_ABOVE * 4)):
            if i == STREAM_ABOVE * 3:
                seen.append(capsys.readouterr().out)
            yield row

    rest = _streamed(capsys, rows())
    assert "2401.00000" in seen[0] and "2401.01000" in seen[0] and "2401.01900" not in seen[0]
    assert rest.splitlines()[-1] == f"{STREAM_ABOVE * 4:,} rows"


def test_a_short_table_keeps_its_count_in_the_title(capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    text = _streamed(capsys, iter(_many(3)))
    assert text.splitlines()[0] == "Papers: 3 rows"
    assert text.count("2401.") == 3


def test_a_long_table_too_wide_for_the_terminal_prints_records_block_by_block(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.cli.output import STREAM_ABOVE

    monkeypatch.setenv("COLUMNS", "40")
    rows = _many(STREAM_ABOVE + 20)
    text = _streamed(capsys, iter(rows))
    assert text.count("paper:") == len(rows)
    # one blank line between records, the block boundary included
    assert "\n\npaper:" in text and "\npaper:" not in text.replace("\n\npaper:", "")
    assert text.splitlines()[-1] == f"{len(rows):,} rows"


def test_a_record_cuts_a_value_longer_than_the_width_after_a_slash() -> None:
    iri = "https://w3id.org/techkg/source/kg/data/techniques/quantized-training.toml"
    rows = [{"graph": "catalog", "source": f"{iri}\n{'x' * 90}", **{f"c{i}": "y" * 12 for i in range(6)}}]
    text = render(rows, width=60)
    lines = text.splitlines()
    assert all(len(line.rstrip()) <= 60 for line in lines)
    start = [i for i, line in enumerate(lines) if line.startswith("source:")][0]
    indent = lines[start].index("https")
    pieces = [line[indent:] for line in lines[start:start + 4]]
    assert pieces[0].endswith("/") and "".join(pieces[:2]) == iri
    assert "".join(pieces[2:]) == "x" * 90
