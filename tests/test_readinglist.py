"""Markdown reading lists: the user's seed file, the project's own copy, pipe tables,
duplicates across sections and malformed input."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.catalog import load_catalog
from kg.errors import ReadingListError
from kg.graphs import READING, READING_LIST
from kg.reading import current_statuses, import_reading_list
from kg.readinglist import parse_reading_list

PIPE_LIST = """# My list

3 entries; 1 read, 2 to read.

## Attention papers

| Status | Paper | Venue | Why It Matters | Links |
|---|---|---|---|---|
| ✅ 📝 | Gated Delta Networks: Improving Mamba2 with Delta Rule | ICLR'25 | Delta rule plus gating. | Paper / Note |
| ⬜ | Fast Transformer Decoding: One Write-Head is All You Need | arXiv'19 | One KV head. | Paper |

## MoE papers

| Status | Paper | Venue | Why It Matters | Links |
|---|---|---|---|---|
| ⬜ | Switch Transformers: Scaling to Trillion Parameter Models with Simple and Efficient Sparsity | JMLR'22 | Top-1. | [Paper](https://arxiv.org/abs/2101.03961) |
| ⬜ | Gated Delta Networks: Improving Mamba2 with Delta Rule | ICLR'25 | Listed twice. | Paper |
"""


def test_seed_reading_list_gives_53_entries_8_read_45_to_read(seed_reading_list: Path) -> None:
    parsed = parse_reading_list(seed_reading_list)
    assert parsed.counts == (53, 8, 45)
    assert parsed.stated_counts == (53, 8, 45)
    assert len(parsed.categories) == 9
    assert sum(e.has_note for e in parsed.entries) == 5


def test_project_reading_list_has_the_same_papers_and_statuses_as_the_seed(seed_reading_list: Path) -> None:
    from kg.build import default_reading_list

    seed = parse_reading_list(seed_reading_list)
    ours = parse_reading_list(default_reading_list())
    assert [(e.title, e.status, e.has_note, e.category) for e in ours.entries] == [
        (e.title, e.status, e.has_note, e.category) for e in seed.entries
    ]


def test_importing_the_seed_links_every_entry_to_a_known_paper(fresh_store, seed_reading_list: Path) -> None:
    report = import_reading_list(fresh_store, seed_reading_list, load_catalog())
    assert (report.entries, report.read, report.to_read) == (53, 8, 45)
    assert report.unmatched == []
    for name in ("Switch Transformer / auxiliary-loss balancing", "Expert Choice Routing", "DeepEP",
                 "DeepSpeed ZeRO", "Megatron-LM Tensor Parallelism"):
        assert name in report.linked_techniques
    statuses = current_statuses(fresh_store)
    assert statuses["https://arxiv.org/abs/1910.02054"][0] == "to-read"  # ZeRO
    assert statuses["https://arxiv.org/abs/2512.14080"][0] == "read"  # SonicMoE


def test_pipe_tables_and_a_paper_in_two_sections(tmp_path: Path, fresh_store) -> None:
    path = tmp_path / "list.md"
    path.write_text(PIPE_LIST, encoding="utf-8")
    parsed = parse_reading_list(path)
    assert parsed.categories == ["Attention papers", "MoE papers"]
    assert parsed.entries[2].links[0].urls == ("https://arxiv.org/abs/2101.03961",)
    report = import_reading_list(fresh_store, path, load_catalog())
    assert report.entries == 4 and report.papers == 3
    rows = fresh_store.select(
        "SELECT ?c WHERE { <https://arxiv.org/abs/2412.06464> tkg:readingCategory/skos:prefLabel ?c }"
    )
    assert sorted(r["c"].value for r in rows) == ["Attention papers", "MoE papers"]
    # read in one section wins over to-read in the other
    assert current_statuses(fresh_store)["https://arxiv.org/abs/2412.06464"][0] == "read"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("✅\tOnly two cells", "expected 5 cells"),
        ("🤷\tA paper\tarXiv\tWhy\tPaper", "not a known status"),
        ("\tA paper\tarXiv\tWhy\tPaper", "no status mark"),
        ("✅\t\tarXiv\tWhy\tPaper", "Paper cell is empty"),
    ],
)
def test_malformed_rows_name_the_file_line_and_expectation(
    tmp_path: Path, fresh_store, seed_reading_list: Path, line: str, message: str
) -> None:
    lines = seed_reading_list.read_text(encoding="utf-8").splitlines()
    index = next(i for i, ln in enumerate(lines) if ln.startswith("⬜\tGPipe"))
    lines.insert(index + 1, line)
    path = tmp_path / "broken.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = fresh_store.count()
    with pytest.raises(ReadingListError) as err:
        import_reading_list(fresh_store, path, load_catalog())
    assert message in str(err.value)
    assert f"broken.md:{index + 2}" in str(err.value)
    assert err.value.hint
    assert fresh_store.count() == before == 0


def test_a_failed_reimport_leaves_the_previous_import_intact(built_store, tmp_path: Path) -> None:
    before = built_store.count(READING_LIST), built_store.count(READING)
    path = tmp_path / "broken.md"
    path.write_text("Title\n\nSection\n\nStatus\tPaper\tVenue\tWhy It Matters\tLinks\n✅\tbroken\n", encoding="utf-8")
    with pytest.raises(ReadingListError):
        import_reading_list(built_store, path, load_catalog())
    assert (built_store.count(READING_LIST), built_store.count(READING)) == before


def test_a_file_without_tables_says_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "empty.md"
    path.write_text("# nothing here\n", encoding="utf-8")
    with pytest.raises(ReadingListError, match="no reading-list table") as err:
        parse_reading_list(path)
    assert "Status | Paper | Venue" in err.value.hint


def _generated(path: Path, rows: int) -> Path:
    lines = ["Generated", "", "Section", "", "Status\tPaper\tVenue\tWhy It Matters\tLinks"]
    lines += [f"{'✅' if i % 3 == 0 else '⬜'}\tSynthetic paper {i:04d} on scale\tarXiv'25\twhy {i}\tPaper"
              for i in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_short_list_replacing_a_long_one_shrinks_the_reading_graph(fresh_store, tmp_path: Path) -> None:
    catalog = load_catalog()
    import_reading_list(fresh_store, _generated(tmp_path / "long.md", 300), catalog)
    long_reading = fresh_store.count(READING)
    report = import_reading_list(fresh_store, _generated(tmp_path / "short.md", 5), catalog)
    assert len(report.removed) == 295 and len(current_statuses(fresh_store)) == 5
    # each paper that left loses its two current-status triples and gains one line in a
    # shared removal event (of four triples more, one per status): one triple less per paper
    assert long_reading - fresh_store.count(READING) == 295 - 2 * 4
    events = fresh_store.select("""SELECT ?e ?status (COUNT(?p) AS ?n) WHERE {
        ?e a tkg:ReadingRemoval ; tkg:previousStatus ?status ; tkg:paper ?p } GROUP BY ?e ?status""").records()
    assert sorted((str(e["status"]).rsplit("/", 1)[-1], int(str(e["n"]))) for e in events) == [
        ("read", 98), ("to-read", 197)]
